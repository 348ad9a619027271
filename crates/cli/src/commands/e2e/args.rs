//! The command line of `zotero-mcp e2e`. Its shape is what `scripts/deploy` calls:
//! `zotero-mcp e2e <url> [--token T] [--write] [--json]`, the password from `ZOTERO_MCP_PASSWORD`.

/// What a run was asked to do. Its `Debug` shows whether a token was given, never the token.
#[derive(Clone, PartialEq, Eq)]
pub struct Args {
    /// The server as given: a domain, an origin or its /mcp URL.
    pub server: String,
    /// A bearer token (from --token or ZOTERO_MCP_TOKEN); without one the run signs in.
    pub token: Option<String>,
    pub write: bool,
    pub json: bool,
    pub username: Option<String>,
    pub password_stdin: bool,
    /// The words of the search step; none lists the newest items.
    pub query: Option<String>,
    /// Whether a `--write` run first removes scratch items older than an hour that earlier runs left.
    pub sweep: bool,
    pub timeout_secs: u64,
    pub retries: u32,
}

impl std::fmt::Debug for Args {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Args")
            .field("server", &self.server)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("write", &self.write)
            .field("json", &self.json)
            .field("username", &self.username)
            .field("password_stdin", &self.password_stdin)
            .field("query", &self.query)
            .field("sweep", &self.sweep)
            .field("timeout_secs", &self.timeout_secs)
            .field("retries", &self.retries)
            .finish()
    }
}

/// Why the arguments were not taken.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ArgsError {
    /// `--help`: not an error, the caller prints the help and exits 0.
    #[error("help")]
    Help,
    #[error("the server is missing: give its address, e.g. `zotero-mcp e2e https://zotero.example.org`")]
    MissingServer,
    #[error("{0} needs a value after it")]
    MissingValue(&'static str),
    #[error("{name}: `{value}` is not a number from {min} to {max}")]
    BadNumber { name: &'static str, value: String, min: u64, max: u64 },
    #[error("unknown option {0}: `zotero-mcp e2e --help` lists the options")]
    UnknownOption(String),
    #[error("unexpected argument `{0}`: give one server only")]
    Unexpected(String),
}

/// Parses the arguments after `e2e`; `env` looks up ZOTERO_MCP_TOKEN and ZOTERO_MCP_USERNAME (a parameter, so
/// tests need not touch the process's environment).
pub fn parse(args: Vec<String>, env: impl Fn(&str) -> Option<String>) -> Result<Args, ArgsError> {
    let mut args = args.into_iter();
    let mut parsed = Args {
        server: String::new(),
        token: None,
        write: false,
        json: false,
        username: None,
        password_stdin: false,
        query: None,
        sweep: true,
        timeout_secs: 120,
        retries: 2,
    };
    fn number(name: &'static str, value: Option<String>, min: u64, max: u64) -> Result<u64, ArgsError> {
        let value = value.ok_or(ArgsError::MissingValue(name))?;
        match value.parse::<u64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(ArgsError::BadNumber { name, value, min, max }),
        }
    }
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => return Err(ArgsError::Help),
            "--write" => parsed.write = true,
            "--json" => parsed.json = true,
            "--password-stdin" => parsed.password_stdin = true,
            "--no-sweep" => parsed.sweep = false,
            "--token" => parsed.token = Some(args.next().ok_or(ArgsError::MissingValue("--token"))?),
            "--username" => parsed.username = Some(args.next().ok_or(ArgsError::MissingValue("--username"))?),
            "--query" => parsed.query = Some(args.next().ok_or(ArgsError::MissingValue("--query"))?),
            "--timeout-secs" => parsed.timeout_secs = number("--timeout-secs", args.next(), 1, 3600)?,
            "--retries" => parsed.retries = number("--retries", args.next(), 0, 10)? as u32,
            other if other.starts_with('-') => return Err(ArgsError::UnknownOption(other.to_owned())),
            other if parsed.server.is_empty() => parsed.server = other.to_owned(),
            other => return Err(ArgsError::Unexpected(other.to_owned())),
        }
    }
    if parsed.server.trim().is_empty() {
        return Err(ArgsError::MissingServer);
    }
    let from_env = |name: &str| env(name).filter(|v| !v.is_empty());
    parsed.token = parsed.token.filter(|t| !t.is_empty()).or_else(|| from_env("ZOTERO_MCP_TOKEN"));
    parsed.username = parsed.username.or_else(|| from_env("ZOTERO_MCP_USERNAME"));
    parsed.query = parsed.query.filter(|q| !q.trim().is_empty());
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_with(args: &[&str], env: &[(&str, &str)]) -> Result<Args, ArgsError> {
        let env: Vec<(String, String)> = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        parse(args.iter().map(|s| (*s).to_owned()).collect(), move |name| {
            env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn the_deploy_scripts_call_is_understood() {
        let args = parse_with(&["https://zotero.example.org", "--token", "T", "--write", "--json"], &[]);
        let args = args.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(args.server, "https://zotero.example.org");
        assert_eq!(args.token.as_deref(), Some("T"));
        assert!(args.write && args.json && args.sweep);
    }

    #[test]
    fn debug_output_never_shows_the_token() {
        let args = parse_with(&["zotero.example.org", "--token", "secret-token-value"], &[]);
        let shown = format!("{:?}", args.unwrap_or_else(|e| panic!("{e}")));
        assert!(!shown.contains("secret-token-value"), "{shown}");
        assert!(shown.contains("token: Some(\"<set>\")"), "{shown}");
    }

    #[test]
    fn a_read_only_run_is_the_default_and_the_token_may_come_from_the_environment() {
        let args = parse_with(&["zotero.example.org"], &[("ZOTERO_MCP_TOKEN", "env-token")]);
        let args = args.unwrap_or_else(|e| panic!("{e}"));
        assert!(!args.write && !args.json);
        assert_eq!(args.token.as_deref(), Some("env-token"));
        // The command line wins over the environment; an empty value counts as none.
        let args = parse_with(&["x.org", "--token", "cli"], &[("ZOTERO_MCP_TOKEN", "env")]).ok();
        assert_eq!(args.and_then(|a| a.token).as_deref(), Some("cli"));
        let args = parse_with(&["x.org"], &[("ZOTERO_MCP_TOKEN", "")]).ok();
        assert_eq!(args.map(|a| a.token), Some(None));
    }

    #[test]
    fn bad_arguments_say_what_is_wrong() {
        assert_eq!(parse_with(&[], &[]), Err(ArgsError::MissingServer));
        assert_eq!(parse_with(&["--write"], &[]), Err(ArgsError::MissingServer));
        assert_eq!(parse_with(&["x.org", "--token"], &[]), Err(ArgsError::MissingValue("--token")));
        assert_eq!(parse_with(&["x.org", "--bogus"], &[]), Err(ArgsError::UnknownOption("--bogus".into())));
        assert_eq!(parse_with(&["x.org", "y.org"], &[]), Err(ArgsError::Unexpected("y.org".into())));
        let bad = parse_with(&["x.org", "--timeout-secs", "0"], &[]);
        assert!(matches!(bad, Err(ArgsError::BadNumber { name: "--timeout-secs", .. })));
        assert_eq!(parse_with(&["x.org", "--help"], &[]), Err(ArgsError::Help));
    }

    #[test]
    fn options_set_their_fields() {
        let args = parse_with(
            &["x.org", "--username", "me", "--password-stdin", "--query", "protein", "--no-sweep", "--retries", "0"],
            &[],
        );
        let args = args.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(args.username.as_deref(), Some("me"));
        assert_eq!(args.query.as_deref(), Some("protein"));
        assert!(args.password_stdin && !args.sweep);
        assert_eq!(args.retries, 0);
    }
}
