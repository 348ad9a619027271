//! A tiny tool, resource and prompt set for the end-to-end tests, registered only with
//! `ENABLE_TEST_FIXTURES=1` so real MCP clients can exercise every method before the Zotero tools exist.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::context::RequestContext;
use crate::mcp::registry::{
    LookupError, NoVariables, Prompt, PromptMessage, PromptSpec, Resource, ResourceContents, ResourceSpec,
};
use crate::mcp::{CacheHint, Declare, Tool, ToolError, ToolSpec};

pub fn register(registry: &mut impl Declare) {
    registry.tool::<Echo>().tool::<WriteProbe>().resource::<Hello>().resource::<EchoResource>().prompt::<TopicPrompt>();
}

/// Arguments of `fixture_echo`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EchoInput {
    /// The text to echo back.
    #[validate(length(min = 1, max = 200))]
    pub text: String,
    /// How many times to repeat it, joined by spaces.
    #[validate(range(min = 1, max = 5))]
    #[serde(default = "one")]
    #[schemars(default = "one")]
    pub repeat: u32,
}

fn one() -> u32 {
    1
}

/// Result of `fixture_echo`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EchoOutput {
    /// The text, repeated.
    pub echoed: String,
    /// Its length in characters.
    pub length: usize,
}

pub struct Echo;

impl Tool for Echo {
    type Input = EchoInput;
    type Output = EchoOutput;
    const SPEC: ToolSpec = ToolSpec::read(
        "fixture_echo",
        "Echo (test fixture)",
        "Returns the given text, repeated. Exists only for end-to-end tests.",
    )
    .ask_for_less("a shorter `text` or a smaller `repeat`");

    fn render(output: &EchoOutput) -> String {
        format!("Echo: {}", output.echoed)
    }

    async fn call(_ctx: &RequestContext, input: EchoInput) -> Result<EchoOutput, ToolError> {
        let echoed = vec![input.text.as_str(); input.repeat as usize].join(" ");
        Ok(EchoOutput { length: echoed.chars().count(), echoed })
    }
}

/// Arguments of `fixture_write`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WriteInput {
    /// Anything; nothing is stored.
    pub note: String,
}

/// Result of `fixture_write`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WriteOutput {
    /// Always true when the call got through the scope check.
    pub written: bool,
}

/// A write tool that writes nothing, so tests can see the scope check refuse a read-only grant.
pub struct WriteProbe;

impl Tool for WriteProbe {
    type Input = WriteInput;
    type Output = WriteOutput;
    const SPEC: ToolSpec = ToolSpec::write(
        "fixture_write",
        "Write probe (test fixture)",
        "Pretends to write; needs the zotero:write scope. Exists only for end-to-end tests.",
    )
    .idempotent();

    fn render(_output: &WriteOutput) -> String {
        "Written.".to_owned()
    }

    async fn call(_ctx: &RequestContext, _input: WriteInput) -> Result<WriteOutput, ToolError> {
        Ok(WriteOutput { written: true })
    }
}

struct Hello;

impl Resource for Hello {
    type Variables = NoVariables;

    const SPEC: ResourceSpec = ResourceSpec {
        uri: "fixture://hello",
        name: "hello",
        title: "Hello (test fixture)",
        description: "A fixed greeting, for end-to-end tests.",
        mime_type: "text/plain",
        cache: CacheHint::private(60_000),
    };

    async fn read(_ctx: &RequestContext, uri: &str, _: NoVariables) -> Result<Vec<ResourceContents>, LookupError> {
        Ok(vec![ResourceContents {
            uri: uri.to_owned(),
            mime_type: "text/plain".into(),
            text: "Hello from zotero-mcp fixtures".into(),
        }])
    }
}

struct EchoResource;

/// The variable of `fixture://echo/{word}`.
#[derive(Deserialize)]
pub struct EchoUri {
    word: String,
}

impl Resource for EchoResource {
    type Variables = EchoUri;

    const SPEC: ResourceSpec = ResourceSpec {
        uri: "fixture://echo/{word}",
        name: "echo",
        title: "Echo a word (test fixture)",
        description: "Returns the word in the URI, for end-to-end tests.",
        mime_type: "text/plain",
        cache: CacheHint::NONE,
    };

    async fn read(_ctx: &RequestContext, uri: &str, vars: EchoUri) -> Result<Vec<ResourceContents>, LookupError> {
        Ok(vec![ResourceContents { uri: uri.to_owned(), mime_type: "text/plain".into(), text: vars.word }])
    }
}

struct TopicPrompt;

/// Arguments of `fixture_prompt`.
#[derive(Deserialize, JsonSchema)]
pub struct TopicArguments {
    /// What to summarise
    topic: String,
}

impl Prompt for TopicPrompt {
    type Arguments = TopicArguments;

    const SPEC: PromptSpec = PromptSpec {
        name: "fixture_prompt",
        title: "Topic prompt (test fixture)",
        description: "Asks for a summary of a topic, for end-to-end tests.",
    };

    async fn render(_ctx: &RequestContext, arguments: TopicArguments) -> Result<Vec<PromptMessage>, LookupError> {
        let topic = arguments.topic;
        Ok(vec![PromptMessage { role: "user", text: format!("Summarise what my library says about {topic}.") }])
    }
}
