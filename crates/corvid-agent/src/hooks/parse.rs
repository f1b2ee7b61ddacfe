//! Reading one settings file's `hooks` object into hook commands: `command` hooks (a shell
//! command) and `prompt` hooks (a question for a model), with their matcher and timeout.

use std::time::Duration;

use serde_json::Value;

use super::names::ToolMatcher;
use super::{DEFAULT_PROMPT_TIMEOUT, DEFAULT_TIMEOUT, HookCommand, HookEvent, HookKind};

/// The hooks of one settings file's `hooks` object; what cannot be read goes to `warnings`.
pub(super) fn parse_table(
    table: &Value,
    source: &str,
    found: &mut Vec<HookCommand>,
    warnings: &mut Vec<String>,
) {
    let Some(table) = table.as_object() else {
        warnings.push(format!("{source}: `hooks` must be an object of events"));
        return;
    };
    for (name, groups) in table {
        let Some(event) = HookEvent::named(name) else {
            warnings.push(format!(
                "{source}: the hook event `{name}` is not one corvid runs ({}); skipped",
                HookEvent::ALL.map(HookEvent::name).join(", ")
            ));
            continue;
        };
        for group in groups.as_array().map(Vec::as_slice).unwrap_or_default() {
            let matcher = group
                .get("matcher")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let tools = match ToolMatcher::parse(&matcher) {
                Ok(tools) => tools,
                Err(reason) => {
                    warnings.push(format!("{source}: {name}: {reason}; skipped"));
                    continue;
                }
            };
            for hook in group
                .get("hooks")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                match one_hook(hook) {
                    Ok((kind, text, default_timeout)) => {
                        let timeout = hook
                            .get("timeout")
                            .and_then(Value::as_f64)
                            .filter(|seconds| *seconds > 0.0)
                            .map_or(default_timeout, Duration::from_secs_f64);
                        found.push(HookCommand {
                            event,
                            matcher: matcher.clone(),
                            kind,
                            command: text,
                            timeout,
                            source: source.to_owned(),
                            tools: tools.clone(),
                        });
                    }
                    Err(reason) => warnings.push(format!("{source}: {name}: {reason}")),
                }
            }
        }
    }
}

/// One entry of a group's `hooks`: its kind, its command or prompt, and its default timeout.
fn one_hook(hook: &Value) -> Result<(HookKind, String, Duration), String> {
    let text = |field: &str| {
        hook.get(field)
            .and_then(Value::as_str)
            .filter(|text| !text.trim().is_empty())
            .map(str::to_owned)
    };
    match hook
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("command")
    {
        "command" => text("command")
            .map(|command| (HookKind::Command, command, DEFAULT_TIMEOUT))
            .ok_or_else(|| "a `command` hook without a command is not run".to_owned()),
        "prompt" => text("prompt")
            .map(|prompt| {
                let model = text("model");
                (HookKind::Prompt { model }, prompt, DEFAULT_PROMPT_TIMEOUT)
            })
            .ok_or_else(|| "a `prompt` hook without a prompt is not run".to_owned()),
        other => Err(format!(
            "a hook of type `{other}` is not run (corvid runs `command` and `prompt` hooks)"
        )),
    }
}
