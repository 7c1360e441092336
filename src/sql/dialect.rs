//! The SQL dialect heapstore parses with: sqlparser's PostgreSQL dialect, with the grammar fixed
//! where sqlparser reads a statement differently from PostgreSQL's parser.
//!
//! [`Pg`] answers every question the parser and tokenizer ask as `PostgreSqlDialect` does
//! (including "is this the PostgreSQL dialect?", so every PostgreSQL-only branch of sqlparser is
//! taken), and overrides infix parsing where sqlparser's differs:
//!
//! - A named function argument's name is an identifier (see `supports_named_fn_args_with_expr_name`).
//! - PostgreSQL's reserved key words are never read as names (see `is_reserved_for_identifier`).
//! - Comparisons and IS [NOT] DISTINCT FROM do not associate (`a = b = c`, `a IS DISTINCT FROM
//!   b IS NULL` are syntax errors, as in PostgreSQL).
//! - `a IS [NOT] DISTINCT FROM b`: sqlparser reads the right operand as a whole expression, so
//!   `p IS DISTINCT FROM q AND r` became `p IS DISTINCT FROM (q AND r)` — a silently different
//!   answer for booleans, and a type error elsewhere. PostgreSQL's grammar gives the right
//!   operand the precedence of IS: `(p IS DISTINCT FROM q) AND r`, and `a IS DISTINCT FROM b = c`
//!   compares `a` with `b = c`.
//!
//! Invariant: every method `PostgreSqlDialect` overrides is forwarded here; a dialect method not
//! listed takes sqlparser's default, as it does for `PostgreSqlDialect`.
//!
//! ## Nesting and the stack
//!
//! sqlparser builds a chain of operators (`a OR b OR c ...`, `1 + 1 + ...`) in a loop, as a
//! left-deep tree, and every later pass over a statement (checks, the binder, the planner, the
//! evaluator, dropping the tree) recurses once per level. A chain of a few hundred `+` used to
//! overflow a connection thread's stack and abort the whole server. PostgreSQL answers such a
//! statement with 54001 "stack depth limit exceeded"; so does heapstore, before parsing:
//! [`check_nesting`] bounds the tree's depth from the tokens (an upper bound: within a list
//! item, a path passes every AND / OR / NOT, one run of other operators and one operand; a
//! parenthesis or CASE is an operand as deep as what it holds, plus a few levels; commas and
//! CASE branches are siblings) and refuses a statement deeper than the calling thread's remaining stack holds at
//! [`STACK_PER_LEVEL`] bytes a level. Invariant: no pass over a statement takes more than
//! `STACK_PER_LEVEL` bytes of stack per level of nesting (the binder, the largest, takes about
//! 2.6kB in a release build; `tests/executor.rs` runs statements at the limit on a 2MB thread).

use sqlparser::ast::Expr;
use sqlparser::dialect::{Dialect, PostgreSqlDialect, Precedence};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan};
use std::any::TypeId;

/// heapstore's dialect: PostgreSQL's, with the fixes the module doc lists.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Pg;

const PG: PostgreSqlDialect = PostgreSqlDialect {};

/// PostgreSQL's reserved key words (its documentation's appendix C, "reserved" without "can be
/// function or type") that sqlparser knows.
/// PostgreSQL's reserved key words that are `AS_LABEL` in its key word list: a column label
/// only after AS.
const AS_LABEL_RESERVED: &[Keyword] = &[
    Keyword::ARRAY,
    Keyword::AS,
    Keyword::CREATE,
    Keyword::EXCEPT,
    Keyword::FETCH,
    Keyword::FOR,
    Keyword::FROM,
    Keyword::GRANT,
    Keyword::GROUP,
    Keyword::HAVING,
    Keyword::INTERSECT,
    Keyword::INTO,
    Keyword::LIMIT,
    Keyword::OFFSET,
    Keyword::ON,
    Keyword::ORDER,
    Keyword::RETURNING,
    Keyword::TO,
    Keyword::UNION,
    Keyword::WHERE,
    Keyword::WINDOW,
    Keyword::WITH,
];

const PG_RESERVED: &[Keyword] = &[
    Keyword::ALL,
    Keyword::ANALYZE,
    Keyword::AND,
    Keyword::ANY,
    Keyword::ARRAY,
    Keyword::AS,
    Keyword::ASC,
    Keyword::ASYMMETRIC,
    Keyword::BOTH,
    Keyword::CASE,
    Keyword::CAST,
    Keyword::CHECK,
    Keyword::COLLATE,
    Keyword::COLUMN,
    Keyword::CONSTRAINT,
    Keyword::CREATE,
    Keyword::CURRENT_CATALOG,
    Keyword::CURRENT_DATE,
    Keyword::CURRENT_ROLE,
    Keyword::CURRENT_TIME,
    Keyword::CURRENT_TIMESTAMP,
    Keyword::CURRENT_USER,
    Keyword::DEFAULT,
    Keyword::DEFERRABLE,
    Keyword::DESC,
    Keyword::DISTINCT,
    Keyword::DO,
    Keyword::ELSE,
    Keyword::END,
    Keyword::EXCEPT,
    Keyword::FALSE,
    Keyword::FETCH,
    Keyword::FOR,
    Keyword::FOREIGN,
    Keyword::FROM,
    Keyword::GRANT,
    Keyword::GROUP,
    Keyword::HAVING,
    Keyword::IN,
    Keyword::INITIALLY,
    Keyword::INTERSECT,
    Keyword::INTO,
    Keyword::LATERAL,
    Keyword::LEADING,
    Keyword::LIMIT,
    Keyword::LOCALTIME,
    Keyword::LOCALTIMESTAMP,
    Keyword::NOT,
    Keyword::NULL,
    Keyword::OFFSET,
    Keyword::ON,
    Keyword::ONLY,
    Keyword::OR,
    Keyword::ORDER,
    Keyword::PLACING,
    Keyword::PRIMARY,
    Keyword::REFERENCES,
    Keyword::RETURNING,
    Keyword::SELECT,
    Keyword::SESSION_USER,
    Keyword::SOME,
    Keyword::SYMMETRIC,
    Keyword::SYSTEM_USER,
    Keyword::TABLE,
    Keyword::THEN,
    Keyword::TO,
    Keyword::TRAILING,
    Keyword::TRUE,
    Keyword::UNION,
    Keyword::UNIQUE,
    Keyword::USER,
    Keyword::USING,
    Keyword::WHEN,
    Keyword::WHERE,
    Keyword::WINDOW,
    Keyword::WITH,
];

macro_rules! forward_bool {
    ($($name:ident),* $(,)?) => {
        $(fn $name(&self) -> bool { PG.$name() })*
    };
}

impl Dialect for Pg {
    fn dialect(&self) -> TypeId {
        TypeId::of::<PostgreSqlDialect>()
    }

    fn identifier_quote_style(&self, identifier: &str) -> Option<char> {
        PG.identifier_quote_style(identifier)
    }

    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        PG.is_delimited_identifier_start(ch)
    }

    fn is_identifier_start(&self, ch: char) -> bool {
        PG.is_identifier_start(ch)
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        PG.is_identifier_part(ch)
    }

    fn is_custom_operator_part(&self, ch: char) -> bool {
        PG.is_custom_operator_part(ch)
    }

    fn get_next_precedence(&self, parser: &Parser) -> Option<Result<u8, ParserError>> {
        PG.get_next_precedence(parser)
    }

    fn prec_value(&self, prec: Precedence) -> u8 {
        PG.prec_value(prec)
    }

    fn parse_infix(&self, parser: &mut Parser, expr: &Expr, _precedence: u8) -> Option<Result<Expr, ParserError>> {
        let [is, second, third, fourth] = parser.peek_tokens::<4>();
        let keyword = |t: &Token, k: Keyword| matches!(t, Token::Word(w) if w.keyword == k);
        // `[NOT] BETWEEN SYMMETRIC low AND high` (sqlparser has neither SYMMETRIC nor
        // ASYMMETRIC): PostgreSQL's parser makes it `x BETWEEN low AND high OR x BETWEEN high
        // AND low` (`x NOT BETWEEN low AND high AND x NOT BETWEEN high AND low`), each operand
        // written twice, and so does this. ASYMMETRIC is plain BETWEEN.
        let negated = keyword(&is, Keyword::NOT) && keyword(&second, Keyword::BETWEEN);
        if negated || keyword(&is, Keyword::BETWEEN) {
            let word = if negated { &third } else { &second };
            let symmetric = keyword(word, Keyword::SYMMETRIC);
            if !symmetric && !keyword(word, Keyword::ASYMMETRIC) {
                return None;
            }
            let words: &[Keyword] = match (negated, symmetric) {
                (true, true) => &[Keyword::NOT, Keyword::BETWEEN, Keyword::SYMMETRIC],
                (true, false) => &[Keyword::NOT, Keyword::BETWEEN, Keyword::ASYMMETRIC],
                (false, true) => &[Keyword::BETWEEN, Keyword::SYMMETRIC],
                (false, false) => &[Keyword::BETWEEN, Keyword::ASYMMETRIC],
            };
            let consumed = parser.parse_keywords(words);
            debug_assert!(consumed, "the peeked [NOT] BETWEEN [A]SYMMETRIC is consumed");
            let b = match parser.parse_between(expr.clone(), negated) {
                Ok(b) => b,
                Err(e) => return Some(Err(e)),
            };
            let Expr::Between { expr, negated, low, high } = b else { return Some(Ok(b)) };
            if !symmetric {
                return Some(Ok(Expr::Between { expr, negated, low, high }));
            }
            let forward = Expr::Between { expr: expr.clone(), negated, low: low.clone(), high: high.clone() };
            let backward = Expr::Between { expr, negated, low: high, high: low };
            let op = if negated { sqlparser::ast::BinaryOperator::And } else { sqlparser::ast::BinaryOperator::Or };
            return Some(Ok(Expr::Nested(Box::new(Expr::BinaryOp { left: Box::new(forward), op, right: Box::new(backward) }))));
        }
        // Comparisons do not associate in PostgreSQL's grammar: `a = b = c` and `a < b < c`
        // are syntax errors there (sqlparser read them as `(a = b) = c`).
        let comparison = |t: &Token| matches!(t, Token::Eq | Token::Neq | Token::Lt | Token::Gt | Token::LtEq | Token::GtEq);
        if comparison(&is) {
            if let Expr::BinaryOp { op, .. } = expr {
                use sqlparser::ast::BinaryOperator as B;
                if matches!(op, B::Eq | B::NotEq | B::Lt | B::Gt | B::LtEq | B::GtEq) {
                    return Some(parser.expected("an operator that follows a comparison", parser.peek_token()));
                }
            }
            return None;
        }
        if !keyword(&is, Keyword::IS) {
            return None;
        }
        // Nor does IS [NOT] DISTINCT FROM: `a IS DISTINCT FROM b IS NULL` is a syntax error.
        if matches!(expr, Expr::IsDistinctFrom(..) | Expr::IsNotDistinctFrom(..)) {
            return Some(parser.expected("an operator that follows IS DISTINCT FROM", parser.peek_token()));
        }
        let negated = if keyword(&second, Keyword::DISTINCT) && keyword(&third, Keyword::FROM) {
            false
        } else if keyword(&second, Keyword::NOT) && keyword(&third, Keyword::DISTINCT) && keyword(&fourth, Keyword::FROM) {
            true
        } else {
            return None;
        };
        let words: &[Keyword] = if negated {
            &[Keyword::IS, Keyword::NOT, Keyword::DISTINCT, Keyword::FROM]
        } else {
            &[Keyword::IS, Keyword::DISTINCT, Keyword::FROM]
        };
        let consumed = parser.parse_keywords(words);
        debug_assert!(consumed, "the peeked IS [NOT] DISTINCT FROM is consumed");
        let right = match parser.parse_subexpr(PG.prec_value(Precedence::Is)) {
            Ok(right) => Box::new(right),
            Err(e) => return Some(Err(e)),
        };
        let left = Box::new(expr.clone());
        Some(Ok(if negated { Expr::IsNotDistinctFrom(left, right) } else { Expr::IsDistinctFrom(left, right) }))
    }

    /// PostgreSQL's reserved key words are never an identifier or a function's name. sqlparser
    /// retries a key word whose special syntax failed to parse as a name (`NOT (x)` as a call of
    /// a function `not`): that reported a missing function `not(boolean)` for what was a nesting
    /// limit, and took time exponential in the nesting (each level parsed twice).
    fn is_reserved_for_identifier(&self, kw: Keyword) -> bool {
        PG.is_reserved_for_identifier(kw) || PG_RESERVED.contains(&kw)
    }

    /// A select item's alias without AS: PostgreSQL's reserved key words that need AS as a
    /// label are not one (`SELECT 1 on` is a syntax error there, and `INSERT ... SELECT 1 ON
    /// CONFLICT ...` must leave ON to the INSERT).
    fn is_column_alias(&self, kw: &Keyword, _parser: &mut Parser) -> bool {
        !sqlparser::keywords::RESERVED_FOR_COLUMN_ALIAS.contains(kw) && !AS_LABEL_RESERVED.contains(kw)
    }

    /// A named argument's name is an identifier in PostgreSQL (`make_interval(days => 3)`).
    /// sqlparser's PostgreSQL dialect reads any expression as a name, and so parses every
    /// argument twice (as a name, then again as the value when no `=>` follows): time
    /// exponential in how deeply calls nest (`abs(abs(...))`, 20 deep, took 1.5 s).
    fn supports_named_fn_args_with_expr_name(&self) -> bool {
        false
    }

    forward_bool!(
        supports_unicode_string_literal,
        supports_filter_during_aggregation,
        supports_group_by_expr,
        allow_extract_custom,
        allow_extract_single_quotes,
        supports_create_index_with_clause,
        supports_explain_with_utility_options,
        supports_listen_notify,
        supports_factorial_operator,
        supports_comment_on,
        supports_load_extension,
        supports_named_fn_args_with_colon_operator,
        supports_empty_projections,
        supports_nested_comments,
        supports_string_escape_constant,
        supports_numeric_literal_underscores,
        supports_array_typedef_with_brackets,
        supports_geometric_types,
        supports_set_names,
        supports_alter_column_type_using,
        supports_notnull_operator,
        supports_interval_options,
    );
}

/// The parser's own nesting limit (sqlparser's default is 50, about a dozen subqueries or
/// function calls deep): high enough that [`check_nesting`], which knows the thread's stack,
/// decides instead.
pub(crate) const RECURSION_LIMIT: usize = 100_000;

/// Stack one level of nesting may take, across every pass over a statement (the parser's
/// included).
pub(crate) const STACK_PER_LEVEL: usize = 4096;

/// Stack kept free beyond the statement's levels: the executor's nodes above an expression, and
/// error handling.
const STACK_RESERVE: usize = 256 << 10;

/// Levels an opening parenthesis counts for: a function call or a nested expression takes a few
/// frames of each pass.
const PAREN_LEVELS: usize = 3;

/// Levels each joined FROM item counts for (`JOIN`, or a comma in a FROM list): a join's plan and
/// executor nodes nest once per item.
const JOIN_LEVELS: usize = 4;

/// Levels a SELECT counts for, beyond its parenthesis: a subquery is parsed, planned and run by
/// frames far larger than an operator's (the parser alone took about 28kB per nested scalar
/// subquery).
const SELECT_LEVELS: usize = 8;

/// One open level of [`nesting_estimate`]'s scan: a statement, a parenthesis or a CASE.
#[derive(Default)]
struct Level {
    /// AND / OR / NOT in the current list item (comma or CASE branch to the next).
    logic: usize,
    /// Other operators since the last of those, and the longest such run in the item.
    run: usize,
    longest_run: usize,
    /// The deepest operand (a closed parenthesis or CASE) in the item.
    deepest_operand: usize,
    /// The deepest item already ended.
    deepest_item: usize,
    /// A SELECT, JOIN or FROM-list comma in this level: its levels are added to the whole level.
    selects: usize,
    /// This level is a CASE (its WHEN / THEN / ELSE separate items, its END closes it).
    case: bool,
    /// Inside a FROM list: a comma joins one more item.
    in_from: bool,
}

impl Level {
    /// How deep the current item can be: a path from its top passes at most every AND / OR /
    /// NOT of the item, one run of other operators (an operator's operands hold no AND / OR /
    /// NOT outside parentheses) and one operand.
    fn item(&self) -> usize {
        self.logic + self.longest_run + self.deepest_operand
    }

    fn end_item(&mut self) {
        self.deepest_item = self.deepest_item.max(self.item());
        (self.logic, self.run, self.longest_run, self.deepest_operand) = (0, 0, 0, 0);
    }

    fn depth(&self) -> usize {
        self.deepest_item.max(self.item()) + self.selects
    }
}

/// An upper bound on how deep the statements of `tokens` nest (see the module doc), computed
/// bottom-up over the tokens with an explicit stack of open levels, so that the estimate itself
/// never recurses.
pub(crate) fn nesting_estimate(tokens: &[TokenWithSpan]) -> usize {
    let mut open: Vec<Level> = Vec::new();
    let mut cur = Level::default();
    let mut deepest = 0usize;
    let keyword = |t: &Token| match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    };
    // Closes the current level into its parent, where it is one operand.
    let close = |open: &mut Vec<Level>, cur: &mut Level| {
        if let Some(parent) = open.pop() {
            let inner = std::mem::replace(cur, parent);
            cur.deepest_operand = cur.deepest_operand.max(inner.depth() + PAREN_LEVELS);
        }
    };
    // The previous token was DISTINCT (`IS DISTINCT FROM` starts no FROM list).
    let mut after_distinct = false;
    for t in tokens {
        let t = &t.token;
        if matches!(t, Token::Whitespace(_)) {
            continue;
        }
        let distinct = keyword(t) == Some(Keyword::DISTINCT);
        let was_distinct = std::mem::replace(&mut after_distinct, distinct);
        match t {
            Token::Whitespace(_) | Token::EOF => {}
            Token::LParen | Token::LBracket => open.push(std::mem::take(&mut cur)),
            // A closing parenthesis where a CASE is open is not its end: sqlparser would have
            // failed; closing both keeps the estimate an upper bound either way.
            Token::RParen | Token::RBracket => close(&mut open, &mut cur),
            Token::Comma => {
                if cur.in_from {
                    cur.selects += JOIN_LEVELS;
                }
                cur.end_item();
            }
            Token::SemiColon => {
                while !open.is_empty() {
                    close(&mut open, &mut cur);
                }
                deepest = deepest.max(cur.depth());
                cur = Level::default();
            }
            Token::Word(_) => match keyword(t) {
                Some(Keyword::CASE) => {
                    open.push(std::mem::take(&mut cur));
                    cur.case = true;
                }
                // END, WHEN, THEN and ELSE outside a CASE are names to sqlparser (`end(x)`):
                // operands.
                Some(Keyword::END) if cur.case => close(&mut open, &mut cur),
                Some(Keyword::WHEN | Keyword::THEN | Keyword::ELSE) if cur.case => cur.end_item(),
                Some(Keyword::SELECT) => cur.selects += SELECT_LEVELS,
                Some(Keyword::FROM) if !was_distinct => cur.in_from = true,
                Some(
                    Keyword::WHERE
                    | Keyword::GROUP
                    | Keyword::HAVING
                    | Keyword::WINDOW
                    | Keyword::ORDER
                    | Keyword::LIMIT
                    | Keyword::OFFSET
                    | Keyword::FETCH
                    | Keyword::UNION
                    | Keyword::INTERSECT
                    | Keyword::EXCEPT
                    | Keyword::RETURNING
                    | Keyword::SET,
                ) => cur.in_from = false,
                Some(Keyword::JOIN) => cur.selects += JOIN_LEVELS,
                // NOT may also stand inside another operator's operand (`a = NOT b`): it
                // does not end the run of operators around it.
                Some(Keyword::NOT) => cur.logic += 1,
                Some(Keyword::AND | Keyword::OR) => {
                    cur.logic += 1;
                    cur.run = 0;
                }
                Some(
                    Keyword::IS
                    | Keyword::LIKE
                    | Keyword::ILIKE
                    | Keyword::SIMILAR
                    | Keyword::BETWEEN
                    | Keyword::IN
                    | Keyword::COLLATE
                    | Keyword::AT
                    | Keyword::ESCAPE
                    | Keyword::XOR
                    | Keyword::OVERLAPS
                    | Keyword::NOTNULL
                    | Keyword::OPERATOR,
                ) => {
                    cur.run += 1;
                    cur.longest_run = cur.longest_run.max(cur.run);
                }
                _ => {}
            },
            // Operands: they deepen nothing.
            Token::Number(..)
            | Token::Char(_)
            | Token::SingleQuotedString(_)
            | Token::DoubleQuotedString(_)
            | Token::DollarQuotedString(_)
            | Token::NationalStringLiteral(_)
            | Token::EscapedStringLiteral(_)
            | Token::UnicodeStringLiteral(_)
            | Token::HexStringLiteral(_)
            | Token::SingleQuotedByteStringLiteral(_)
            | Token::DoubleQuotedByteStringLiteral(_)
            | Token::Placeholder(_)
            | Token::Period => {}
            // Every other token is an operator.
            _ => {
                cur.run += 1;
                cur.longest_run = cur.longest_run.max(cur.run);
            }
        }
    }
    while !open.is_empty() {
        close(&mut open, &mut cur);
    }
    deepest.max(cur.depth())
}

/// Refuses statements that nest deeper than the calling thread's stack holds (54001, as
/// PostgreSQL's stack depth check), before anything recurses over them.
pub(crate) fn check_nesting(tokens: &[TokenWithSpan]) -> crate::error::Result<()> {
    let depth = nesting_estimate(tokens);
    // A statement this shallow fits in any thread heapstore or a caller runs it on.
    if depth <= 64 {
        return Ok(());
    }
    let remaining = stacker::remaining_stack().unwrap_or(2 << 20);
    let holds = remaining.saturating_sub(STACK_RESERVE) / STACK_PER_LEVEL;
    if depth <= holds {
        return Ok(());
    }
    Err(crate::error::PgError::new("54001", "stack depth limit exceeded")
        .with_detail(format!("The statement nests expressions up to about {depth} levels deep; this thread's stack holds {holds}."))
        .with_hint(
            "Write a long chain of OR comparisons as IN (...) or = ANY (array), or run the statement on a thread with a larger stack.",
        ))
}

/// The marker [`rewrite_locking_clauses`] puts first in a locking clause's `OF` name for the
/// weaker strength of its word: `FOR NO KEY UPDATE`, `FOR KEY SHARE` (not an identifier a
/// user can write unquoted; `sql::query` reads it back).
pub(crate) const LOCK_MARKER_WEAKER: &str = "\u{1}weaker";

/// Spells PostgreSQL's locking clauses in the words sqlparser reads: `FOR NO KEY UPDATE` as
/// `FOR UPDATE OF "<marker>"`, `FOR KEY SHARE` as `FOR SHARE OF "<marker>"` (with a
/// relation: `OF "<marker>".t`), and `OF a, b` as one clause per relation, each with the
/// clause's NOWAIT or SKIP LOCKED. Other text is left as it is.
pub(crate) fn rewrite_locking_clauses(tokens: &mut Vec<TokenWithSpan>) {
    let is_kw = |t: &TokenWithSpan, k: Keyword| matches!(&t.token, Token::Word(w) if w.keyword == k && w.quote_style.is_none());
    limit_before_locking(tokens);
    let mut i = 0;
    while i < tokens.len() {
        if !is_kw(&tokens[i], Keyword::FOR) {
            i += 1;
            continue;
        }
        let span = tokens[i].span;
        // Positions of the significant tokens after FOR.
        let sig: Vec<usize> = (i + 1..tokens.len()).filter(|&j| !matches!(tokens[j].token, Token::Whitespace(_))).take(4096).collect();
        let at = |k: usize, kw: Keyword| sig.get(k).is_some_and(|&j| is_kw(&tokens[j], kw));
        let (word, weaker, mut k) = if at(0, Keyword::NO) && at(1, Keyword::KEY) && at(2, Keyword::UPDATE) {
            (Keyword::UPDATE, true, 3)
        } else if at(0, Keyword::KEY) && at(1, Keyword::SHARE) {
            (Keyword::SHARE, true, 2)
        } else if at(0, Keyword::UPDATE) {
            (Keyword::UPDATE, false, 1)
        } else if at(0, Keyword::SHARE) {
            (Keyword::SHARE, false, 1)
        } else {
            i += 1;
            continue;
        };
        // OF name [, name ...], each name words joined by periods.
        let mut names: Vec<Vec<Token>> = Vec::new();
        let mut malformed = false;
        if at(k, Keyword::OF) {
            k += 1;
            loop {
                let mut name = Vec::new();
                while let Some(&j) = sig.get(k) {
                    match &tokens[j].token {
                        Token::Word(_) if name.last().is_none_or(|t| *t == Token::Period) => name.push(tokens[j].token.clone()),
                        Token::Period if matches!(name.last(), Some(Token::Word(_))) => name.push(Token::Period),
                        _ => break,
                    }
                    k += 1;
                }
                // OF with no name, a comma with none after it, or a name ending in a period:
                // left for the parser to refuse.
                if name.is_empty() || name.last() == Some(&Token::Period) {
                    malformed = true;
                    break;
                }
                names.push(name);
                if sig.get(k).is_some_and(|&j| tokens[j].token == Token::Comma) {
                    k += 1;
                } else {
                    break;
                }
            }
        }
        let mut nonblock = Vec::new();
        if at(k, Keyword::NOWAIT) {
            nonblock.push(Token::make_keyword("NOWAIT"));
            k += 1;
        } else if at(k, Keyword::SKIP) && at(k + 1, Keyword::LOCKED) {
            nonblock.push(Token::make_keyword("SKIP"));
            nonblock.push(Token::make_keyword("LOCKED"));
            k += 2;
        }
        if malformed || (!weaker && names.len() <= 1) {
            i = sig.get(k.saturating_sub(1)).map_or(i + 1, |&j| j + 1);
            continue;
        }
        let end = sig.get(k.saturating_sub(1)).map_or(tokens.len(), |&j| j + 1);
        let marker = || {
            Token::Word(sqlparser::tokenizer::Word {
                value: LOCK_MARKER_WEAKER.into(),
                quote_style: Some('"'),
                keyword: Keyword::NoKeyword,
            })
        };
        let word_tok = Token::make_keyword(if word == Keyword::UPDATE { "UPDATE" } else { "SHARE" });
        let mut out: Vec<Token> = Vec::new();
        let clauses: Vec<Option<Vec<Token>>> = if names.is_empty() { vec![None] } else { names.into_iter().map(Some).collect() };
        for name in clauses {
            out.extend([Token::make_keyword("FOR"), Token::Whitespace(sqlparser::tokenizer::Whitespace::Space), word_tok.clone()]);
            if weaker || name.is_some() {
                out.extend([
                    Token::Whitespace(sqlparser::tokenizer::Whitespace::Space),
                    Token::make_keyword("OF"),
                    Token::Whitespace(sqlparser::tokenizer::Whitespace::Space),
                ]);
                if weaker {
                    out.push(marker());
                    if name.is_some() {
                        out.push(Token::Period);
                    }
                }
                out.extend(name.into_iter().flatten());
            }
            for t in &nonblock {
                out.extend([Token::Whitespace(sqlparser::tokenizer::Whitespace::Space), t.clone()]);
            }
            out.push(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space));
        }
        let n = out.len();
        tokens.splice(i..end, out.into_iter().map(|token| TokenWithSpan { token, span }));
        i += n;
    }
}

/// The variable [`rewrite_set_constraints`] sets, and the value standing for `ALL`.
pub(crate) const SET_CONSTRAINTS_MARKER: &str = "\u{1}set_constraints";
pub(crate) const ALL_CONSTRAINTS: &str = "\u{1}all";

/// `SET CONSTRAINTS { ALL | name [, ...] } { DEFERRED | IMMEDIATE }`, which sqlparser does not
/// read, as `SET "<marker>" TO 'deferred' | 'immediate', '<name>' ...` (names folded as
/// identifiers, a schema qualifier dropped; `ALL` as [`ALL_CONSTRAINTS`]). Anything else
/// after `SET CONSTRAINTS` is left for the parser to refuse.
pub(crate) fn rewrite_set_constraints(tokens: &mut Vec<TokenWithSpan>) {
    let is_kw = |t: &TokenWithSpan, k: Keyword| matches!(&t.token, Token::Word(w) if w.keyword == k && w.quote_style.is_none());
    // Last statement first: a rewrite moves only the tokens after it.
    for i in statement_starts(tokens).into_iter().rev() {
        if !is_kw(&tokens[i], Keyword::SET) {
            continue;
        }
        let sig: Vec<usize> = (i + 1..tokens.len()).filter(|&j| !matches!(tokens[j].token, Token::Whitespace(_))).take(4096).collect();
        let constraints = sig.first().is_some_and(
            |&j| matches!(&tokens[j].token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("constraints")),
        );
        if !constraints {
            continue;
        }
        let mut k = 1;
        let mut names = Vec::new();
        if sig.get(k).is_some_and(|&j| is_kw(&tokens[j], Keyword::ALL)) {
            names.push(ALL_CONSTRAINTS.to_string());
            k += 1;
        } else {
            loop {
                // name [. name ...]: the last part.
                let mut last = None;
                while let Some(&j) = sig.get(k) {
                    match &tokens[j].token {
                        Token::Word(w) if last.is_none() || matches!(tokens[sig[k - 1]].token, Token::Period) => {
                            last = Some(if w.quote_style.is_some() { w.value.clone() } else { w.value.to_ascii_lowercase() });
                        }
                        Token::Period if last.is_some() => {}
                        _ => break,
                    }
                    k += 1;
                }
                let Some(n) = last else { break };
                names.push(n);
                if sig.get(k).is_some_and(|&j| tokens[j].token == Token::Comma) {
                    k += 1;
                } else {
                    break;
                }
            }
        }
        let mode = sig.get(k).and_then(|&j| match &tokens[j].token {
            Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("deferred") => Some("deferred"),
            Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("immediate") => Some("immediate"),
            _ => None,
        });
        if let (Some(mode), false) = (mode, names.is_empty()) {
            let after = sig.get(k + 1).map(|&j| &tokens[j].token);
            if matches!(after, None | Some(Token::SemiColon | Token::EOF)) {
                let span = tokens[i].span;
                let sp = || Token::Whitespace(sqlparser::tokenizer::Whitespace::Space);
                let mut out = vec![
                    Token::make_keyword("SET"),
                    sp(),
                    Token::Word(sqlparser::tokenizer::Word {
                        value: SET_CONSTRAINTS_MARKER.into(),
                        quote_style: Some('"'),
                        keyword: Keyword::NoKeyword,
                    }),
                    sp(),
                    Token::make_keyword("TO"),
                    sp(),
                    Token::SingleQuotedString(mode.into()),
                ];
                for n in names {
                    out.push(Token::Comma);
                    out.push(Token::SingleQuotedString(n));
                }
                let end = sig[k] + 1;
                tokens.splice(i..end, out.into_iter().map(|token| TokenWithSpan { token, span }));
            }
        }
    }
}

/// The index of each statement's first token that is not whitespace (at the start, and
/// after each `;`).
pub(crate) fn statement_starts(tokens: &[TokenWithSpan]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut at_start = true;
    for (i, t) in tokens.iter().enumerate() {
        match t.token {
            Token::Whitespace(_) => {}
            Token::SemiColon => at_start = true,
            _ => {
                if at_start {
                    out.push(i);
                }
                at_start = false;
            }
        }
    }
    out
}

/// String constants as PostgreSQL's lexer reads them where sqlparser does not: a
/// dollar-quoted string (`$$it's$$`, `$tag$...$tag$`) is a string constant like any other,
/// and two single-quoted strings separated only by whitespace that contains a newline
/// (`--` comments count as whitespace, `/* */` ones do not) are one constant (`'multi'`
/// newline `'line'` is `'multiline'`, the SQL standard's continuation). A dollar-quoted
/// string is never continued. One pass: the tokens are moved to a new vector.
pub(crate) fn rewrite_string_constants(tokens: &mut Vec<TokenWithSpan>) {
    use sqlparser::tokenizer::Whitespace as W;
    if !tokens.iter().any(|t| matches!(t.token, Token::SingleQuotedString(_) | Token::DollarQuotedString(_))) {
        return;
    }
    let mut out: Vec<TokenWithSpan> = Vec::with_capacity(tokens.len());
    // The index in `out` of the last single-quoted string, and whether only whitespace with a
    // newline has come since.
    let mut open: Option<(usize, bool)> = None;
    let mut pending: Vec<TokenWithSpan> = Vec::new();
    for t in std::mem::take(tokens) {
        match &t.token {
            Token::Whitespace(w) if open.is_some() => {
                if matches!(w, W::Newline | W::SingleLineComment { .. }) {
                    open = open.map(|(i, _)| (i, true));
                } else if matches!(w, W::MultiLineComment(_)) {
                    // A block comment ends the chance of a continuation.
                    out.append(&mut pending);
                    out.push(t);
                    open = None;
                    continue;
                }
                pending.push(t);
            }
            Token::SingleQuotedString(next) if matches!(open, Some((_, true))) => {
                let (i, _) = open.expect("matched");
                if let Token::SingleQuotedString(v) = &mut out[i].token {
                    v.push_str(next);
                }
                pending.clear();
                open = Some((i, false));
            }
            _ => {
                out.append(&mut pending);
                // Only a string written single-quoted may be continued.
                let single = matches!(t.token, Token::SingleQuotedString(_));
                let t = match t.token {
                    Token::DollarQuotedString(d) => TokenWithSpan { token: Token::SingleQuotedString(d.value), span: t.span },
                    _ => t,
                };
                out.push(t);
                open = single.then(|| (out.len() - 1, false));
            }
        }
    }
    out.append(&mut pending);
    *tokens = out;
}

/// The constraint name [`rewrite_on_conflict_target`] gives an inference target sqlparser
/// does not read: this prefix, the target's elements as SQL text, then (after
/// [`INFER_WHERE`]) its WHERE clause's.
pub(crate) const INFER_MARKER: &str = "\u{1}infer:";
/// Separates an inference target's elements from its WHERE clause in [`INFER_MARKER`]'s name.
pub(crate) const INFER_WHERE: char = '\u{2}';

/// A token as SQL text that reads back as the same token (the tokenizer has unescaped string
/// constants: each is written back as a standard string with the same value).
fn token_sql(t: &Token) -> String {
    match t {
        Token::SingleQuotedString(s)
        | Token::EscapedStringLiteral(s)
        | Token::NationalStringLiteral(s)
        | Token::UnicodeStringLiteral(s) => format!("'{}'", s.replace('\'', "''")),
        Token::DollarQuotedString(d) => format!("'{}'", d.value.replace('\'', "''")),
        Token::Word(w) if w.quote_style == Some('"') => format!("\"{}\"", w.value.replace('"', "\"\"")),
        other => other.to_string(),
    }
}

/// `INSERT ... ON CONFLICT (element, ...) [WHERE predicate] DO ...` where an element is not a
/// bare column name (an expression, `(lower(email))`) or a WHERE clause follows, which
/// sqlparser does not read, as `ON CONFLICT ON CONSTRAINT "<marker>elements<sep>predicate"
/// DO ...`: the statement infers its arbiter indexes from them as PostgreSQL does
/// (`sql::dml::OnConflict::bind`).
pub(crate) fn rewrite_on_conflict_target(tokens: &mut Vec<TokenWithSpan>) {
    let is_kw = |t: &TokenWithSpan, k: Keyword| matches!(&t.token, Token::Word(w) if w.keyword == k && w.quote_style.is_none());
    let next_sig = |tokens: &[TokenWithSpan], from: usize| (from..tokens.len()).find(|&j| !matches!(tokens[j].token, Token::Whitespace(_)));
    let conflict = |t: &TokenWithSpan| is_kw(t, Keyword::CONFLICT);
    if !tokens.iter().any(conflict) {
        return;
    }
    // The replacements, (from, to, tokens), made in one pass at the end.
    let mut edits: Vec<(usize, usize, Vec<Token>)> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if !is_kw(&tokens[i], Keyword::ON) {
            i += 1;
            continue;
        }
        let Some(c) = next_sig(tokens, i + 1) else { break };
        let Some(open) = next_sig(tokens, c + 1) else { break };
        if !is_kw(&tokens[c], Keyword::CONFLICT) || tokens[open].token != Token::LParen {
            i += 1;
            continue;
        }
        // The matching parenthesis; whether the list is of bare names only.
        let (mut depth, mut close, mut simple) = (0usize, None, true);
        for (j, t) in tokens.iter().enumerate().skip(open) {
            match &t.token {
                Token::LParen => depth += 1,
                Token::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(j);
                        break;
                    }
                }
                Token::Whitespace(_) | Token::Comma => {}
                Token::Word(_) if depth == 1 => {}
                _ => simple = false,
            }
            if depth > 1 {
                simple = false;
            }
        }
        let Some(close) = close else { break };
        // An optional WHERE clause up to DO.
        let mut end = close + 1;
        let mut predicate = None;
        if let Some(w) = next_sig(tokens, close + 1).filter(|&w| is_kw(&tokens[w], Keyword::WHERE)) {
            let mut depth = 0usize;
            let mut j = w + 1;
            while j < tokens.len() {
                match &tokens[j].token {
                    Token::LParen => depth += 1,
                    Token::RParen => depth = depth.saturating_sub(1),
                    Token::SemiColon | Token::EOF => break,
                    _ if depth == 0 && is_kw(&tokens[j], Keyword::DO) => break,
                    _ => {}
                }
                j += 1;
            }
            predicate = Some(tokens[w + 1..j].iter().map(|t| token_sql(&t.token)).collect::<String>());
            end = j;
        }
        // Only an INSERT's target: DO follows it.
        let before_do = next_sig(tokens, end).is_some_and(|d| is_kw(&tokens[d], Keyword::DO));
        if (simple && predicate.is_none()) || !before_do {
            i = close + 1;
            continue;
        }
        let elements: String = tokens[open + 1..close].iter().map(|t| token_sql(&t.token)).collect();
        let mut name = format!("{INFER_MARKER}{elements}");
        if let Some(p) = predicate {
            name.push(INFER_WHERE);
            name.push_str(&p);
        }
        let sp = || Token::Whitespace(sqlparser::tokenizer::Whitespace::Space);
        let out = vec![
            Token::make_keyword("ON"),
            sp(),
            Token::make_keyword("CONSTRAINT"),
            sp(),
            Token::Word(sqlparser::tokenizer::Word { value: name, quote_style: Some('"'), keyword: Keyword::NoKeyword }),
            sp(),
        ];
        edits.push((open, end, out));
        i = end;
    }
    if edits.is_empty() {
        return;
    }
    let old = std::mem::take(tokens);
    let mut edits = edits.into_iter().peekable();
    let mut it = old.into_iter().enumerate().peekable();
    while let Some((k, t)) = it.next() {
        if edits.peek().is_some_and(|(from, _, _)| *from == k) {
            let (_, to, out) = edits.next().expect("peeked");
            let span = t.span;
            tokens.extend(out.into_iter().map(|token| TokenWithSpan { token, span }));
            // Skip the rest of the replaced range.
            while it.peek().is_some_and(|(k, _)| *k < to) {
                it.next();
            }
        } else {
            tokens.push(t);
        }
    }
}

/// The column name [`rewrite_constraint_include`] puts between a constraint's key columns and
/// its INCLUDE columns (not a name a user can write).
pub(crate) const INCLUDE_MARKER: &str = "\u{1}include";

/// A table constraint's `PRIMARY KEY (keys) INCLUDE (columns)` / `UNIQUE (keys) INCLUDE
/// (columns)`, which sqlparser does not read, as `PRIMARY KEY (keys, "<marker>", columns)`
/// (`sql::ddl` splits the list again). CREATE INDEX's INCLUDE (after `ON t (...)`) is left
/// alone, as is anything else.
pub(crate) fn rewrite_constraint_include(tokens: &mut Vec<TokenWithSpan>) {
    let is_kw = |t: &TokenWithSpan, k: Keyword| matches!(&t.token, Token::Word(w) if w.keyword == k && w.quote_style.is_none());
    if !tokens.iter().any(|t| is_kw(t, Keyword::INCLUDE)) {
        return;
    }
    let sig = |t: &TokenWithSpan| !matches!(t.token, Token::Whitespace(_));
    let prev_sig = |tokens: &[TokenWithSpan], before: usize| (0..before).rev().find(|&j| sig(&tokens[j]));
    let next_sig = |tokens: &[TokenWithSpan], from: usize| (from..tokens.len()).find(|&j| sig(&tokens[j]));
    let mut i = 0;
    while i < tokens.len() {
        if !is_kw(&tokens[i], Keyword::INCLUDE) {
            i += 1;
            continue;
        }
        let (Some(close), Some(open_inc)) = (prev_sig(tokens, i), next_sig(tokens, i + 1)) else { break };
        if tokens[close].token != Token::RParen || tokens[open_inc].token != Token::LParen {
            i += 1;
            continue;
        }
        // The key list's opening parenthesis, and what comes before it.
        let mut depth = 0usize;
        let mut open = None;
        for j in (0..=close).rev() {
            match tokens[j].token {
                Token::RParen => depth += 1,
                Token::LParen => {
                    depth -= 1;
                    if depth == 0 {
                        open = Some(j);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(before) = open.and_then(|o| prev_sig(tokens, o)) else {
            i += 1;
            continue;
        };
        let constraint = is_kw(&tokens[before], Keyword::UNIQUE)
            || (is_kw(&tokens[before], Keyword::KEY) && prev_sig(tokens, before).is_some_and(|p| is_kw(&tokens[p], Keyword::PRIMARY)));
        if !constraint {
            i += 1;
            continue;
        }
        let span = tokens[close].span;
        let marker =
            Token::Word(sqlparser::tokenizer::Word { value: INCLUDE_MARKER.into(), quote_style: Some('"'), keyword: Keyword::NoKeyword });
        let sp = Token::Whitespace(sqlparser::tokenizer::Whitespace::Space);
        let with = [Token::Comma, sp.clone(), marker, Token::Comma, sp].map(|token| TokenWithSpan { token, span });
        tokens.splice(close..=open_inc, with);
        i = close + 5;
    }
}

/// The schema-like first part [`rewrite_comment_on`] gives an object's name: the kind of
/// relation it named (`index`, `view`, `sequence`) after this prefix.
pub(crate) const COMMENT_KIND_MARKER: &str = "\u{1}comment_on_";

/// `COMMENT ON INDEX | VIEW | SEQUENCE name IS ...`, which sqlparser does not read, as
/// `COMMENT ON TABLE "<marker><kind>".name IS ...` (the name keeps its own parts after the
/// marker). Anything else is left for the parser.
pub(crate) fn rewrite_comment_on(tokens: &mut Vec<TokenWithSpan>) {
    let is_kw = |t: &TokenWithSpan, k: Keyword| matches!(&t.token, Token::Word(w) if w.keyword == k && w.quote_style.is_none());
    // Last statement first: a rewrite moves only the tokens after it.
    for i in statement_starts(tokens).into_iter().rev() {
        if !is_kw(&tokens[i], Keyword::COMMENT) {
            continue;
        }
        let sig: Vec<usize> = (i + 1..tokens.len()).filter(|&j| !matches!(tokens[j].token, Token::Whitespace(_))).take(3).collect();
        let (Some(&on), Some(&kind)) = (sig.first(), sig.get(1)) else { continue };
        let word = match &tokens[kind].token {
            Token::Word(w) if w.quote_style.is_none() => w.value.to_ascii_lowercase(),
            _ => String::new(),
        };
        if !is_kw(&tokens[on], Keyword::ON) || !matches!(word.as_str(), "index" | "view" | "sequence") {
            continue;
        }
        let span = tokens[kind].span;
        let out = [
            Token::make_keyword("TABLE"),
            Token::Whitespace(sqlparser::tokenizer::Whitespace::Space),
            Token::Word(sqlparser::tokenizer::Word {
                value: format!("{COMMENT_KIND_MARKER}{word}"),
                quote_style: Some('"'),
                keyword: Keyword::NoKeyword,
            }),
            Token::Period,
        ];
        // The name's first part follows the kind's whitespace.
        let name = (kind + 1..tokens.len()).find(|&j| !matches!(tokens[j].token, Token::Whitespace(_))).unwrap_or(tokens.len());
        tokens.splice(kind..name, out.into_iter().map(|token| TokenWithSpan { token, span }));
    }
}

/// PostgreSQL takes a SELECT's LIMIT / OFFSET / FETCH after its locking clauses too
/// (`... FOR UPDATE SKIP LOCKED LIMIT 1`); sqlparser only before them. Moves such a limit
/// (to the end of its query: a closing parenthesis, `;` or the end) in front of the
/// locking clauses, which then apply as they would written after it.
fn limit_before_locking(tokens: &mut [TokenWithSpan]) {
    let is_kw = |t: &TokenWithSpan, k: Keyword| matches!(&t.token, Token::Word(w) if w.keyword == k && w.quote_style.is_none());
    let sig = |tokens: &[TokenWithSpan], from: usize| (from..tokens.len()).find(|&j| !matches!(tokens[j].token, Token::Whitespace(_)));
    let mut i = 0;
    while i < tokens.len() {
        let locking = is_kw(&tokens[i], Keyword::FOR)
            && sig(tokens, i + 1).is_some_and(|j| {
                is_kw(&tokens[j], Keyword::UPDATE)
                    || is_kw(&tokens[j], Keyword::SHARE)
                    || is_kw(&tokens[j], Keyword::NO)
                    || is_kw(&tokens[j], Keyword::KEY)
            });
        if !locking {
            i += 1;
            continue;
        }
        // The locking clauses: words, names, commas and periods up to the limit's keyword.
        let mut j = i + 1;
        let start = loop {
            match tokens.get(j).map(|t| &t.token) {
                Some(Token::Word(_)) if [Keyword::LIMIT, Keyword::OFFSET, Keyword::FETCH].iter().any(|&k| is_kw(&tokens[j], k)) => {
                    break Some(j)
                }
                Some(Token::Word(_) | Token::Comma | Token::Period | Token::Whitespace(_)) => j += 1,
                _ => break None,
            }
        };
        let Some(start) = start else {
            i = j.max(i + 1);
            continue;
        };
        // The limit: to the end of its query (what may follow a SELECT in a statement ends
        // it too: INSERT's ON CONFLICT and RETURNING, CREATE TABLE AS's WITH [NO] DATA).
        let mut depth = 0usize;
        let mut end = start;
        while end < tokens.len() {
            match tokens[end].token {
                Token::LParen => depth += 1,
                Token::RParen if depth == 0 => break,
                Token::RParen => depth -= 1,
                Token::SemiColon if depth == 0 => break,
                Token::Word(_)
                    if depth == 0
                        && [Keyword::RETURNING, Keyword::ON, Keyword::WITH, Keyword::FOR].iter().any(|&k| is_kw(&tokens[end], k)) =>
                {
                    break
                }
                _ => {}
            }
            end += 1;
        }
        // [i, start) locking clauses, [start, end) the limit: swap them, a space between.
        tokens[i..end].rotate_left(start - i);
        i = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(sql: &str) -> String {
        Parser::new(&Pg).try_with_sql(sql).unwrap().parse_expr().unwrap().to_string()
    }

    #[test]
    fn is_distinct_from_binds_like_is() {
        assert_eq!(parse("p IS DISTINCT FROM q AND r"), "p IS DISTINCT FROM q AND r");
        let e = Parser::new(&Pg).try_with_sql("p IS DISTINCT FROM q AND r").unwrap().parse_expr().unwrap();
        assert!(matches!(e, Expr::BinaryOp { .. }), "AND is the root: {e:?}");
        let e = Parser::new(&Pg).try_with_sql("p IS NOT DISTINCT FROM q OR r").unwrap().parse_expr().unwrap();
        assert!(matches!(e, Expr::BinaryOp { .. }), "OR is the root: {e:?}");
        // The right operand takes comparisons (they bind tighter than IS).
        let e = Parser::new(&Pg).try_with_sql("a IS DISTINCT FROM b = c").unwrap().parse_expr().unwrap();
        let Expr::IsDistinctFrom(_, right) = e else { panic!("IS DISTINCT FROM is the root") };
        assert!(matches!(*right, Expr::BinaryOp { .. }));
        // Left-hand comparisons bind tighter too: (a = b) IS DISTINCT FROM c.
        let e = Parser::new(&Pg).try_with_sql("a = b IS NOT DISTINCT FROM c").unwrap().parse_expr().unwrap();
        assert!(matches!(e, Expr::IsNotDistinctFrom(..)));
        // Neither associates, as in PostgreSQL's grammar; parenthesized, they may be chained.
        for bad in ["a = b = c", "a < b <> c", "a IS DISTINCT FROM b IS NULL", "a IS NOT DISTINCT FROM b IS DISTINCT FROM c"] {
            assert!(Parser::new(&Pg).try_with_sql(bad).unwrap().parse_expr().is_err(), "{bad}");
        }
        for good in ["(a = b) = c", "a = (b = c)", "(a IS DISTINCT FROM b) IS NULL", "a IS NULL IS NULL", "a = b IS TRUE"] {
            assert!(Parser::new(&Pg).try_with_sql(good).unwrap().parse_expr().is_ok(), "{good}");
        }
    }

    fn depth(sql: &str) -> usize {
        nesting_estimate(&sqlparser::tokenizer::Tokenizer::new(&Pg, sql).tokenize_with_location().unwrap())
    }

    #[test]
    fn nesting_is_bounded_from_above() {
        const S: usize = SELECT_LEVELS;
        assert_eq!(depth("SELECT a FROM t"), S);
        assert_eq!(depth("SELECT 1 + 2 + 3"), S + 2);
        // Commas separate siblings; a list does not deepen.
        assert_eq!(depth("SELECT 1 + 1, 2 + 2, 3 + 3"), S + 1);
        assert_eq!(depth("SELECT f(1 + 1, 2)"), S + 1 + PAREN_LEVELS);
        // An operator chain inside parentheses adds to the depth where they open.
        assert_eq!(depth("SELECT 1 + (2 + (3 + 4))"), S + 3 + 2 * PAREN_LEVELS);
        // A subquery adds its SELECT to everything inside it, commas or not.
        assert_eq!(depth("SELECT (SELECT 1, (SELECT 2))"), 3 * S + 2 * PAREN_LEVELS);
        // Statements are counted apart.
        assert_eq!(depth("SELECT 1; SELECT 2 + 2"), S + 1);
        // An early operand sits at the bottom of a left-deep chain: its depth adds to the chain's.
        assert_eq!(depth("SELECT ((1)) + 1 + 1 + 1"), S + 3 + 2 * PAREN_LEVELS);
        // A chain of OR comparisons: the ORs and one comparison.
        let ors = format!("SELECT count(*) FROM t WHERE {}", (0..300).map(|i| format!("a = {i}")).collect::<Vec<_>>().join(" OR "));
        // (`count(*)` is an operand of the item, and its `*` an operator.)
        assert_eq!(depth(&ors), S + 299 + 1 + 1 + PAREN_LEVELS);
        // CASE branches are siblings.
        let case = format!("SELECT CASE {} END", (0..500).map(|i| format!("WHEN a = {i} THEN b + {i}")).collect::<Vec<_>>().join(" "));
        assert_eq!(depth(&case), S + PAREN_LEVELS + 1);
        let chain = format!("SELECT {}", vec!["1"; 1000].join(" + "));
        assert_eq!(depth(&chain), S + 999);
        // END, THEN, ... outside a CASE are names (`end(end(x))` nests as calls do).
        assert_eq!(depth("SELECT end(end(end(a)))"), S + 3 * PAREN_LEVELS);
        assert_eq!(depth("SELECT then + then + then"), S + 2);
        // NOT inside an operand keeps the run of operators around it.
        assert_eq!(depth("SELECT a = NOT - - b = NOT - - c"), S + 2 + 6);
        // Operators spelled as words.
        assert_eq!(depth("SELECT a NOTNULL, b OPERATOR(pg_catalog.+) c OPERATOR(pg_catalog.+) d"), S + 2 + 1 + PAREN_LEVELS);
        // Each joined FROM item; a select list's commas and IS DISTINCT FROM are not a FROM list.
        assert_eq!(depth("SELECT a, b FROM t1, t2 JOIN t3 ON true, t4 WHERE x"), S + 3 * JOIN_LEVELS);
        assert_eq!(depth("SELECT a IS DISTINCT FROM b, c, d"), S + 1);
    }

    #[test]
    fn too_deep_is_54001() {
        let chain = format!("SELECT {}", vec!["1"; 1_000_000].join(" + "));
        let toks = sqlparser::tokenizer::Tokenizer::new(&Pg, &chain).tokenize_with_location().unwrap();
        let e = check_nesting(&toks).unwrap_err();
        assert_eq!(e.code, "54001");
        let short = sqlparser::tokenizer::Tokenizer::new(&Pg, "SELECT 1 + 1").tokenize_with_location().unwrap();
        assert!(check_nesting(&short).is_ok());
    }

    #[test]
    fn the_rest_is_postgresql() {
        assert!((&Pg as &dyn Dialect).is::<PostgreSqlDialect>());
        assert_eq!(parse("a IS NULL AND b"), "a IS NULL AND b");
        assert_eq!(parse("x::int + 1"), "x::INT + 1");
    }
}
