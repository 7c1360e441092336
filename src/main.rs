use clap::Parser;

fn main() {
    let cli = heapstore::cli::Cli::parse();
    std::process::exit(heapstore::cli::run(cli));
}
