//! A Claude Code-sized request (~4.7 KB as Anthropic Messages, three tools, a tool loop in
//! progress), the same conversation in each dialect the bench speaks: what real cross-dialect
//! clients send, where the short conversation of `payload` is the floor's fair comparison.

use bytes::Bytes;
use serde_json::{Value, json};

use super::Stream;

const SYSTEM: &str = "You are an interactive CLI tool that helps users with software engineering \
tasks. Use the instructions below and the tools available to you to assist the user. IMPORTANT: \
Assist with defensive security tasks only. Refuse to create, modify, or improve code that may be \
used maliciously. You must never generate or guess URLs for the user unless you are confident \
that the URLs are for helping the user with programming. When you cannot or will not help the \
user with something, please do not say why or what it could lead to. Keep your responses short, \
since they will be displayed on a command line interface. Only use emojis if the user explicitly \
requests it. Prefer editing existing files to creating new ones.";

const ENVIRONMENT: &str = "<env>\nWorking directory: /home/dev/project\nIs directory a git repo: \
Yes\nPlatform: linux\nOS Version: Linux 6.8.0\nToday's date: 2026-12-07\n</env>\nYou are powered \
by the model named grok.";

/// The start of the user's question, where [`super::held`] puts its marker.
pub(super) const QUESTION_START: &str = "The config loader panics";

const QUESTION: &str = "The config loader panics when the file is missing. Find where it reads \
the file and make it return an error that names the path instead.";

const REMINDER: &str = "<system-reminder>\nAs you answer the user's questions, you can use the \
following context: the project uses thiserror for library errors and anyhow in binaries.\n\
</system-reminder>";

const THOUGHT: &str = "I'll look for the place that reads the configuration file first.";

const GREP_OUTPUT: &str = "src/config/load.rs:42:    let text = std::fs::read_to_string(&path).unwrap();\n\
src/config/load.rs:43:    let config: Config = toml::from_str(&text).unwrap();\n\
src/main.rs:17:    let config = config::load(&args.config);";

const FILE_TEXT: &str = "    38\tpub fn load(path: &Path) -> Config {\n    39\t    // The file is \
optional in theory, but nothing handles its absence yet.\n    40\t    let path = \
path.to_path_buf();\n    41\t    tracing::debug!(?path, \"loading config\");\n    42\t    let \
text = std::fs::read_to_string(&path).unwrap();\n    43\t    let config: Config = \
toml::from_str(&text).unwrap();\n    44\t    config\n    45\t}\n";

/// How many rounds of the tool loop the long form carries: about 56 KB as Anthropic Messages,
/// the size of a real Claude Code turn some way into a session.
pub(crate) const LONG_ROUNDS: usize = 16;

/// The tools of `rounds` rounds: the three below, and for each further round three more like
/// them under other names (a real client's tool list is longer than three).
fn tools(rounds: usize) -> Vec<(String, &'static str, Value)> {
    (0..rounds.max(1))
        .flat_map(|round| {
            base_tools()
                .into_iter()
                .map(move |(name, description, schema)| {
                    let name = if round == 0 {
                        name.to_owned()
                    } else {
                        format!("{name}{round}")
                    };
                    (name, description, schema)
                })
        })
        .collect()
}

/// The three tools, Anthropic-shaped: name, description, JSON Schema.
fn base_tools() -> [(&'static str, &'static str, Value); 3] {
    [
        (
            "Bash",
            "Executes a given bash command in a persistent shell session with optional timeout, \
ensuring proper handling and security measures. Before executing the command, verify the \
directory exists. Always quote file paths that contain spaces.",
            json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The command to execute"},
                    "timeout": {"type": "number", "description": "Optional timeout in milliseconds (max 600000)"},
                    "description": {"type": "string", "description": "Clear, concise description of what this command does in 5-10 words"}
                },
                "required": ["command"],
                "additionalProperties": false,
                "$schema": "http://json-schema.org/draft-07/schema#"
            }),
        ),
        (
            "Read",
            "Reads a file from the local filesystem. The file_path parameter must be an absolute \
path. By default, it reads up to 2000 lines starting from the beginning of the file; you can \
optionally specify a line offset and limit.",
            json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": "The absolute path to the file to read"},
                    "offset": {"type": "number", "description": "The line number to start reading from"},
                    "limit": {"type": "number", "description": "The number of lines to read"}
                },
                "required": ["file_path"],
                "additionalProperties": false,
                "$schema": "http://json-schema.org/draft-07/schema#"
            }),
        ),
        (
            "Edit",
            "Performs exact string replacements in files. You must use the Read tool at least \
once before editing. The edit will fail if old_string is not unique in the file; provide more \
context or use replace_all.",
            json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": "The absolute path to the file to modify"},
                    "old_string": {"type": "string", "description": "The text to replace"},
                    "new_string": {"type": "string", "description": "The text to replace it with"},
                    "replace_all": {"type": "boolean", "default": false, "description": "Replace all occurrences of old_string"}
                },
                "required": ["file_path", "old_string", "new_string"],
                "additionalProperties": false,
                "$schema": "http://json-schema.org/draft-07/schema#"
            }),
        ),
    ]
}

/// The two calls the assistant made in round `round`, as (id, name, input).
fn calls(round: usize) -> [(String, &'static str, Value); 2] {
    [
        (
            format!("toolu_01A9bench{round:015}1"),
            "Bash",
            json!({"command": "rg -n 'read_to_string|toml::from_str' src", "description": "Find where the config file is read"}),
        ),
        (
            format!("toolu_01A9bench{round:015}2"),
            "Read",
            json!({"file_path": "/home/dev/project/src/config/load.rs", "offset": 38, "limit": 8}),
        ),
    ]
}

/// As Anthropic Messages, the way Claude Code writes it (system blocks with `cache_control`,
/// `metadata.user_id`, `thinking` off).
pub(crate) fn messages(stream: Stream, rounds: usize) -> Bytes {
    let tools: Vec<Value> = tools(rounds)
        .into_iter()
        .map(|(name, description, schema)| {
            json!({"name": name, "description": description, "input_schema": schema})
        })
        .collect();
    let mut messages = vec![json!({"role": "user", "content": [
        {"type": "text", "text": REMINDER},
        {"type": "text", "text": QUESTION, "cache_control": {"type": "ephemeral"}},
    ]})];
    for round in 0..rounds.max(1) {
        let [bash, read] = calls(round);
        messages.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": THOUGHT},
            {"type": "tool_use", "id": bash.0, "name": bash.1, "input": bash.2},
            {"type": "tool_use", "id": read.0, "name": read.1, "input": read.2},
        ]}));
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": bash.0, "content": GREP_OUTPUT},
            {"type": "tool_result", "tool_use_id": read.0, "content": [{"type": "text", "text": FILE_TEXT}]},
        ]}));
    }
    let body = json!({
        "model": "grok",
        "max_tokens": 32000,
        "system": [
            {"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": ENVIRONMENT},
        ],
        "messages": messages,
        "tools": tools,
        "temperature": 1,
        "metadata": {"user_id": "user_bench_account__session_7f3a9c2e-0000-4000-8000-000000000000"},
        "stream": stream == Stream::Enabled,
    });
    Bytes::from(body.to_string())
}

/// As OpenAI chat (what corvid passes through to a chat upstream untouched).
pub(crate) fn chat(stream: Stream, rounds: usize) -> Bytes {
    let tools: Vec<Value> = tools(rounds)
        .into_iter()
        .map(|(name, description, schema)| {
            json!({"type": "function", "function": {"name": name, "description": description, "parameters": schema}})
        })
        .collect();
    let call = |(id, name, input): &(String, &str, Value)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": input.to_string()}});
    let mut messages = vec![
        json!({"role": "system", "content": format!("{SYSTEM}\n\n{ENVIRONMENT}")}),
        json!({"role": "user", "content": [
            {"type": "text", "text": REMINDER},
            {"type": "text", "text": QUESTION},
        ]}),
    ];
    for round in 0..rounds.max(1) {
        let [bash, read] = calls(round);
        messages.push(json!({"role": "assistant", "content": THOUGHT, "tool_calls": [call(&bash), call(&read)]}));
        messages.push(json!({"role": "tool", "tool_call_id": bash.0, "content": GREP_OUTPUT}));
        messages.push(json!({"role": "tool", "tool_call_id": read.0, "content": FILE_TEXT}));
    }
    let mut body = json!({
        "model": "grok",
        "max_completion_tokens": 32000,
        "messages": messages,
        "tools": tools,
        "temperature": 1,
        "user": "user_bench_account__session_7f3a9c2e-0000-4000-8000-000000000000",
        "stream": stream == Stream::Enabled,
    });
    if stream == Stream::Enabled {
        body["stream_options"] = json!({"include_usage": true});
    }
    Bytes::from(body.to_string())
}

/// As OpenAI Responses, the way Codex writes it (`instructions`, typed input items,
/// `store: false`).
pub(crate) fn responses(stream: Stream, rounds: usize) -> Bytes {
    let tools: Vec<Value> = tools(rounds)
        .into_iter()
        .map(|(name, description, schema)| {
            json!({"type": "function", "name": name, "description": description, "parameters": schema, "strict": false})
        })
        .collect();
    let call = |(id, name, input): &(String, &str, Value)| json!({"type": "function_call", "call_id": id, "name": name, "arguments": input.to_string()});
    let output = |id: &str, text: &str| json!({"type": "function_call_output", "call_id": id, "output": text});
    let mut input = vec![json!({"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": REMINDER},
        {"type": "input_text", "text": QUESTION},
    ]})];
    for round in 0..rounds.max(1) {
        let [bash, read] = calls(round);
        input.push(json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": THOUGHT}]}));
        input.push(call(&bash));
        input.push(call(&read));
        input.push(output(&bash.0, GREP_OUTPUT));
        input.push(output(&read.0, FILE_TEXT));
    }
    let body = json!({
        "model": "grok",
        "instructions": format!("{SYSTEM}\n\n{ENVIRONMENT}"),
        "input": input,
        "tools": tools,
        "tool_choice": "auto",
        "parallel_tool_calls": true,
        "store": false,
        "max_output_tokens": 32000,
        "stream": stream == Stream::Enabled,
    });
    Bytes::from(body.to_string())
}
