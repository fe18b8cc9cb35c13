//! The AIP-160 grammar: a filter's text to a tree whose every field and value
//! remembers where it was written, so that errors point at it.
//!
//! ```text
//! expression  = sequence { "AND" sequence }
//! sequence    = factor { factor }            (juxtaposition is AND)
//! factor      = term { "OR" term }           (OR binds tighter than AND)
//! term        = [ "NOT" | "-" ] term | simple
//! simple      = "(" expression ")" | restriction
//! restriction = member [ comparator arg ]
//! member      = value { "." value }
//! arg         = [ "-" ] member | "(" expression ")"
//! comparator  = "<=" | "<" | ">=" | ">" | "!=" | "=" | ":"
//! value       = TEXT | STRING ("…" or '…', with backslash escapes)
//! ```
//!
//! Functions (`f(x)`) are part of the grammar but of no filter this runtime
//! evaluates: they are refused where they start.

use super::{FilterError, MAX_DEPTH, MAX_LENGTH, MAX_RESTRICTIONS};

/// A parsed filter.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Expr {
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Not(Box<Expr>),
    /// `member comparator arg`.
    Restriction(Restriction),
    /// A bare value (a global restriction, AIP-160's free-text search).
    Global(Member),
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Restriction {
    pub member: Member,
    pub comparator: Comparator,
    pub arg: Arg,
}

/// A field path or a literal, as written: its parts and where it starts
/// (a byte offset into the filter).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Member {
    pub parts: Vec<Part>,
    pub at: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Part {
    pub text: String,
    /// Written as a string literal (`"…"`).
    pub quoted: bool,
}

impl Member {
    /// The parts joined by dots: a field path (`a.b`), or a literal that
    /// holds dots (`2.5`, `1.5s`).
    pub fn joined(&self) -> String {
        let parts: Vec<&str> = self.parts.iter().map(|p| p.text.as_str()).collect();
        parts.join(".")
    }

    /// Whether it is one unquoted word equal to `word`.
    pub fn is_word(&self, word: &str) -> bool {
        matches!(self.parts.as_slice(), [part] if !part.quoted && part.text == word)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Comparator {
    Equal,
    NotEqual,
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
    Has,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Arg {
    Value(Member),
    /// `( expression )` as an argument, at this offset.
    Composite(usize),
}

/// Parses a non-empty filter.
pub(super) fn parse(input: &str) -> Result<Expr, FilterError> {
    if input.len() > MAX_LENGTH {
        return Err(FilterError::new(
            MAX_LENGTH,
            format!("a filter is at most {MAX_LENGTH} bytes long"),
        ));
    }
    let tokens = lex(input)?;
    let mut parser = Parser {
        tokens,
        next: 0,
        end: input.len(),
        depth: 0,
        restrictions: 0,
    };
    let expr = parser.expression()?;
    match parser.peek() {
        None => Ok(expr),
        Some(token) => Err(FilterError::new(
            token.at,
            format!("unexpected {}", token.kind.describe()),
        )),
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Open,
    Close,
    Dot,
    Comma,
    Minus,
    Comparator(Comparator),
    Text(String),
    String(String),
}

impl Kind {
    fn describe(&self) -> String {
        match self {
            Kind::Open => "`(`".into(),
            Kind::Close => "`)`".into(),
            Kind::Dot => "`.`".into(),
            Kind::Comma => "`,`".into(),
            Kind::Minus => "`-`".into(),
            Kind::Comparator(_) => "a comparator".into(),
            Kind::Text(text) => format!("`{text}`"),
            Kind::String(_) => "a string".into(),
        }
    }
}

#[derive(Clone, Debug)]
struct Token {
    kind: Kind,
    at: usize,
    /// Whether whitespace (or the start) comes right before it.
    spaced: bool,
}

/// Characters that end a TEXT token.
fn delimits(c: char) -> bool {
    c.is_whitespace() || "().,<>=!:\"'".contains(c)
}

fn lex(input: &str) -> Result<Vec<Token>, FilterError> {
    let mut tokens = Vec::new();
    let mut chars = input.char_indices().peekable();
    let mut spaced = true;
    while let Some(&(at, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            spaced = true;
            continue;
        }
        let two = input[at..].get(..2).unwrap_or("");
        let (kind, len) = match (c, two) {
            (_, "<=") => (Kind::Comparator(Comparator::LessOrEqual), 2),
            (_, ">=") => (Kind::Comparator(Comparator::GreaterOrEqual), 2),
            (_, "!=") => (Kind::Comparator(Comparator::NotEqual), 2),
            ('<', _) => (Kind::Comparator(Comparator::Less), 1),
            ('>', _) => (Kind::Comparator(Comparator::Greater), 1),
            ('=', _) => (Kind::Comparator(Comparator::Equal), 1),
            (':', _) => (Kind::Comparator(Comparator::Has), 1),
            ('(', _) => (Kind::Open, 1),
            (')', _) => (Kind::Close, 1),
            ('.', _) => (Kind::Dot, 1),
            (',', _) => (Kind::Comma, 1),
            ('-', _) => (Kind::Minus, 1),
            ('!', _) => return Err(FilterError::new(at, "`!` is only part of `!=`")),
            ('"' | '\'', _) => {
                let (text, len) = string(input, at, c)?;
                (Kind::String(text), len)
            }
            _ => {
                let len = input[at..].find(delimits).unwrap_or(input.len() - at);
                (Kind::Text(input[at..at + len].to_owned()), len)
            }
        };
        tokens.push(Token { kind, at, spaced });
        spaced = false;
        while chars.peek().is_some_and(|&(i, _)| i < at + len) {
            chars.next();
        }
    }
    Ok(tokens)
}

/// `value` as a string literal of a filter: double-quoted, with `"` and
/// `\` escaped, so that a filter reads it back as exactly `value`.
pub fn literal(value: &str) -> String {
    let mut quoted = String::with_capacity(value.len() + 2);
    quoted.push('"');
    for c in value.chars() {
        match c {
            '"' | '\\' => quoted.extend(['\\', c]),
            '\n' => quoted.push_str("\\n"),
            '\t' => quoted.push_str("\\t"),
            _ => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

/// A string literal starting at `at` with quote `quote`: its value and
/// length. `\` escapes the next character (`\n`, `\t` as usual).
fn string(input: &str, at: usize, quote: char) -> Result<(String, usize), FilterError> {
    let mut value = String::new();
    let mut chars = input[at + 1..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((_, 'n')) => value.push('\n'),
                Some((_, 't')) => value.push('\t'),
                Some((_, escaped)) => value.push(escaped),
                None => break,
            },
            _ if c == quote => return Ok((value, i + 2)),
            _ => value.push(c),
        }
    }
    Err(FilterError::new(at, "this string has no closing quote"))
}

struct Parser {
    tokens: Vec<Token>,
    next: usize,
    end: usize,
    depth: usize,
    restrictions: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.next)
    }

    fn at(&self) -> usize {
        self.peek().map_or(self.end, |token| token.at)
    }

    fn keyword(&self, word: &str) -> bool {
        matches!(self.peek(), Some(Token { kind: Kind::Text(text), .. }) if text == word)
    }

    fn deeper(&mut self) -> Result<(), FilterError> {
        self.depth += 1;
        match self.depth > MAX_DEPTH {
            true => Err(FilterError::new(
                self.at(),
                format!("a filter nests at most {MAX_DEPTH} levels"),
            )),
            false => Ok(()),
        }
    }

    fn expression(&mut self) -> Result<Expr, FilterError> {
        self.deeper()?;
        let mut all = vec![self.sequence()?];
        while self.keyword("AND") {
            self.next += 1;
            all.push(self.sequence()?);
        }
        self.depth -= 1;
        Ok(flat(all, Expr::And))
    }

    fn sequence(&mut self) -> Result<Expr, FilterError> {
        let mut all = vec![self.factor()?];
        while self.peek().is_some_and(|token| match &token.kind {
            Kind::Text(text) => text != "AND" && text != "OR",
            Kind::Open | Kind::Minus | Kind::String(_) => true,
            _ => false,
        }) {
            all.push(self.factor()?);
        }
        Ok(flat(all, Expr::And))
    }

    fn factor(&mut self) -> Result<Expr, FilterError> {
        let mut any = vec![self.term()?];
        while self.keyword("OR") {
            self.next += 1;
            any.push(self.term()?);
        }
        Ok(flat(any, Expr::Or))
    }

    fn term(&mut self) -> Result<Expr, FilterError> {
        let negated = match self.peek().map(|token| &token.kind) {
            Some(Kind::Minus) => true,
            Some(Kind::Text(text)) if text == "NOT" => true,
            _ => false,
        };
        if !negated {
            return self.simple();
        }
        self.next += 1;
        self.deeper()?;
        let inner = self.term()?;
        self.depth -= 1;
        Ok(Expr::Not(Box::new(inner)))
    }

    fn simple(&mut self) -> Result<Expr, FilterError> {
        if matches!(self.peek().map(|t| &t.kind), Some(Kind::Open)) {
            return self.composite();
        }
        let member = self.member()?;
        let Some(Token {
            kind: Kind::Comparator(comparator),
            ..
        }) = self.peek().cloned()
        else {
            return Ok(Expr::Global(member));
        };
        self.next += 1;
        self.restrictions += 1;
        if self.restrictions > MAX_RESTRICTIONS {
            return Err(FilterError::new(
                member.at,
                format!("a filter has at most {MAX_RESTRICTIONS} comparisons"),
            ));
        }
        let arg = self.arg()?;
        Ok(Expr::Restriction(Restriction {
            member,
            comparator,
            arg,
        }))
    }

    fn composite(&mut self) -> Result<Expr, FilterError> {
        let open = self.at();
        self.next += 1;
        let inner = self.expression()?;
        match self.peek().map(|t| &t.kind) {
            Some(Kind::Close) => {
                self.next += 1;
                Ok(inner)
            }
            _ => Err(FilterError::new(
                open,
                "this `(` has no matching `)`".to_owned(),
            )),
        }
    }

    fn arg(&mut self) -> Result<Arg, FilterError> {
        let at = self.at();
        match self.peek().map(|t| &t.kind) {
            Some(Kind::Open) => {
                self.composite()?;
                Ok(Arg::Composite(at))
            }
            Some(Kind::Minus) => {
                self.next += 1;
                let mut member = self.member()?;
                let adjacent = member.at == at + 1 && !member.parts[0].quoted;
                if !adjacent {
                    return Err(FilterError::new(at, "`-` must be followed by a number"));
                }
                member.parts[0].text.insert(0, '-');
                member.at = at;
                Ok(Arg::Value(member))
            }
            _ => Ok(Arg::Value(self.member()?)),
        }
    }

    fn member(&mut self) -> Result<Member, FilterError> {
        let at = self.at();
        let mut parts = vec![self.value()?];
        while matches!(
            self.peek(),
            Some(Token {
                kind: Kind::Dot,
                spaced: false,
                ..
            })
        ) {
            self.next += 1;
            parts.push(self.value()?);
        }
        if matches!(
            self.peek(),
            Some(Token {
                kind: Kind::Open,
                spaced: false,
                ..
            })
        ) {
            return Err(FilterError::new(
                at,
                "functions are not supported in filters",
            ));
        }
        Ok(Member { parts, at })
    }

    fn value(&mut self) -> Result<Part, FilterError> {
        let at = self.at();
        let part = match self.peek().map(|t| &t.kind) {
            Some(Kind::Text(text)) => Part {
                text: text.clone(),
                quoted: false,
            },
            Some(Kind::String(text)) => Part {
                text: text.clone(),
                quoted: true,
            },
            Some(other) => {
                return Err(FilterError::new(
                    at,
                    format!("expected a field or a value, found {}", other.describe()),
                ));
            }
            None => {
                return Err(FilterError::new(
                    at,
                    "expected a field or a value, found the end",
                ));
            }
        };
        self.next += 1;
        Ok(part)
    }
}

/// One expression, or several joined by `join`.
fn flat(mut all: Vec<Expr>, join: fn(Vec<Expr>) -> Expr) -> Expr {
    match all.len() {
        1 => all.pop().expect("one expression"),
        _ => join(all),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_literal_reads_back_as_its_value() {
        for value in [
            "",
            "plain",
            "a\"b",
            "back\\slash\\",
            "x\" OR name = \"y",
            "line\nand\ttab",
            "é\"",
        ] {
            let quoted = literal(value);
            let (read, length) = string(&quoted, 0, '"').unwrap();
            assert_eq!((read.as_str(), length), (value, quoted.len()), "{quoted}");
        }
    }

    fn field(name: &str, at: usize) -> Member {
        Member {
            parts: name
                .split('.')
                .map(|text| Part {
                    text: text.into(),
                    quoted: false,
                })
                .collect(),
            at,
        }
    }

    fn restriction(name: &str, at: usize, comparator: Comparator, value: Member) -> Expr {
        Expr::Restriction(Restriction {
            member: field(name, at),
            comparator,
            arg: Arg::Value(value),
        })
    }

    #[test]
    fn or_binds_tighter_than_and_and_juxtaposition_is_and() {
        let parsed = parse("a = 1 AND b = 2 OR c = 3 d:*").unwrap();
        let expected = Expr::And(vec![
            restriction("a", 0, Comparator::Equal, field("1", 4)),
            Expr::And(vec![
                Expr::Or(vec![
                    restriction("b", 10, Comparator::Equal, field("2", 14)),
                    restriction("c", 19, Comparator::Equal, field("3", 23)),
                ]),
                restriction("d", 25, Comparator::Has, field("*", 27)),
            ]),
        ]);
        assert_eq!(parsed, expected);
    }

    #[test]
    fn negation_strings_negative_numbers_and_paths() {
        let parsed = parse(r#"NOT a.b != "x \"y\"" -c < -2.5"#).unwrap();
        let Expr::And(all) = parsed else {
            panic!("a sequence")
        };
        let Expr::Not(first) = &all[0] else {
            panic!("NOT")
        };
        let Expr::Restriction(first) = first.as_ref() else {
            panic!("a restriction")
        };
        assert_eq!(first.member.joined(), "a.b");
        let Arg::Value(value) = &first.arg else {
            panic!("a value")
        };
        assert_eq!(value.parts[0].text, "x \"y\"");
        assert!(value.parts[0].quoted);
        let Expr::Not(second) = &all[1] else {
            panic!("-")
        };
        let Expr::Restriction(second) = second.as_ref() else {
            panic!("a restriction")
        };
        let Arg::Value(value) = &second.arg else {
            panic!("a value")
        };
        assert_eq!((value.joined().as_str(), value.at), ("-2.5", 26));
    }

    #[test]
    fn errors_say_where() {
        for (input, at, says) in [
            ("a = ", 4, "found the end"),
            ("(a = 1", 0, "no matching `)`"),
            ("a = \"x", 4, "no closing quote"),
            ("a = 1)", 5, "unexpected `)`"),
            ("f(x) = 1", 0, "functions"),
            ("a ! b", 2, "`!=`"),
            ("a = - 1", 4, "followed by a number"),
        ] {
            let error = parse(input).unwrap_err();
            assert_eq!(error.at, at, "{input}");
            assert!(error.message.contains(says), "{input}: {}", error.message);
        }
    }

    #[test]
    fn size_depth_and_comparisons_are_bounded() {
        let long = format!("a = \"{}\"", "x".repeat(MAX_LENGTH));
        assert!(parse(&long).unwrap_err().message.contains("bytes"));
        let deep = format!(
            "{}a = 1{}",
            "(".repeat(MAX_DEPTH + 1),
            ")".repeat(MAX_DEPTH + 1)
        );
        assert!(parse(&deep).unwrap_err().message.contains("nests"));
        let negations = format!("{}a = 1", "NOT ".repeat(MAX_DEPTH + 1));
        assert!(parse(&negations).unwrap_err().message.contains("nests"));
        let many = vec!["a = 1"; MAX_RESTRICTIONS + 1].join(" OR ");
        assert!(parse(&many).unwrap_err().message.contains("comparisons"));
        let enough = vec!["a = 1"; MAX_RESTRICTIONS].join(" OR ");
        assert!(parse(&enough).is_ok());
    }
}
