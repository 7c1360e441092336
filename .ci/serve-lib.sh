# Sourced by the client and driver scripts: a scratch data directory with a role alice
# (password sekret), `heapstore serve` started on a random port, stopped and removed on exit.
# start_server [--set name=value ...] starts it and waits for its Unix socket.
BIN=${HEAPSTORE_BIN:-target/release/heapstore}
WORK=$(mktemp -d)
PORT=${HEAPSTORE_TEST_PORT:-$((20000 + RANDOM % 20000))}
SERVER_PID=
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill -TERM "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

init_data() {
    "$BIN" -D "$WORK/data" init >/dev/null
    printf 'sekret\n' | "$BIN" -D "$WORK/data" user add alice >/dev/null
}

start_server() {
    "$BIN" -D "$WORK/data" serve --port "$PORT" "$@" 2>"$WORK/server.log" &
    SERVER_PID=$!
    for _ in $(seq 1 100); do [ -S "$WORK/data/.s.PGSQL.$PORT" ] && break; sleep 0.1; done
}
