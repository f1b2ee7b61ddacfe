//! Custom tools (`.corvid/tools/<name>/tool.json`) through the tool box, beside the built-ins:
//! discovery, the schema check, arguments on stdin, and `bash`'s runner.

use std::sync::Arc;
use std::time::Duration;

use corvid_tools::{
    CustomTools, Offer, Run, ToolBox, ToolDetail, ToolError, ToolKind, ToolLimits, ToolPlugin,
    ToolSource,
};
use serde_json::{Value, json};

use super::support::{Project, project, project_with};

fn toolbox(project: &Project) -> ToolBox {
    let custom = CustomTools.open(project.tools.shared_context());
    ToolBox::new(vec![
        Arc::new(project.tools.clone()) as Arc<dyn ToolSource>,
        custom,
    ])
}

fn tool(project: &Project, name: &str, command: &str, parameters: Value) {
    project.write(
        &format!(".corvid/tools/{name}/tool.json"),
        serde_json::to_string_pretty(&json!({
            "name": name,
            "description": format!("The {name} tool."),
            "parameters": parameters,
            "command": command,
        }))
        .unwrap(),
    );
}

fn any_object() -> Value {
    json!({"type": "object"})
}

async fn call(
    offer: &Offer,
    name: &str,
    arguments: Value,
) -> Result<corvid_tools::ToolOutput, ToolError> {
    let prepared = offer.prepare(name, arguments).await?;
    offer.apply(name, prepared.plan, Run::unattended()).await
}

#[tokio::test]
async fn the_arguments_arrive_on_stdin_exactly_and_the_command_runs_in_the_tools_folder() {
    let p = project();
    tool(
        &p,
        "record",
        "cat > received.json; pwd > cwd.txt; echo recorded",
        any_object(),
    );
    let offer = toolbox(&p).offer().await.offer;
    let arguments = json!({
        "text": "naïve ☃ \"quoted\" \\ back\nslash",
        "n": 3,
        "nested": {"list": [1, 2.5, null, true], "empty": {}},
    });
    let output = call(&offer, "record", arguments.clone()).await.unwrap();
    assert!(
        !output.is_error && output.text.contains("recorded"),
        "{}",
        output.text
    );
    let received = std::fs::read(p.path(".corvid/tools/record/received.json")).unwrap();
    assert_eq!(received, serde_json::to_vec(&arguments).unwrap());
    assert_eq!(
        p.read(".corvid/tools/record/cwd.txt").trim(),
        p.path(".corvid/tools/record").display().to_string()
    );
}

#[tokio::test]
async fn shell_metacharacters_in_the_arguments_are_inert() {
    let p = project();
    tool(&p, "record", "cat > received.json", any_object());
    let offer = toolbox(&p).offer().await.offer;
    let hostile = "$(touch ../../../sub) `touch ../../../tick`; touch ../../../semi && touch ../../../and | touch ../../../pipe > ../../../redirect '\"";
    let arguments = json!({"text": hostile, "$(touch key)": "`touch value`"});
    let output = call(&offer, "record", arguments.clone()).await.unwrap();
    assert!(!output.is_error, "{}", output.text);
    let received: Value = serde_json::from_slice(
        &std::fs::read(p.path(".corvid/tools/record/received.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(received, arguments);
    for marker in [
        "sub", "tick", "semi", "and", "pipe", "redirect", "key", "value",
    ] {
        assert!(!p.path(marker).exists(), "{marker} was created");
        assert!(
            !p.path(&format!(".corvid/tools/record/{marker}")).exists(),
            "{marker} was created in the tool's folder"
        );
    }
    // The proposal shows the command and the arguments, not a command line built from them.
    let prepared = offer.prepare("record", arguments).await.unwrap();
    assert_eq!(prepared.kind, ToolKind::Mutating);
    assert!(
        prepared.proposal.summary.starts_with(
            "Run the custom tool `record`: `cat > received.json` in .corvid/tools/record, with {"
        ),
        "{}",
        prepared.proposal.summary
    );
    assert_eq!(prepared.proposal.command, None);
}

#[tokio::test]
async fn schema_violations_are_refused_before_anything_runs() {
    let p = project();
    tool(
        &p,
        "greet",
        "touch ran; cat",
        json!({
            "type": "object",
            "properties": {"name": {"type": "string", "minLength": 1}},
            "required": ["name"],
            "additionalProperties": false
        }),
    );
    let offer = toolbox(&p).offer().await.offer;
    for (arguments, expected) in [
        (json!({}), "name"),
        (json!({"name": 7}), "/name"),
        (json!({"name": ""}), "/name"),
        (json!({"name": "ada", "extra": true}), "extra"),
        (json!("not an object"), "object"),
    ] {
        let error = offer.prepare("greet", arguments.clone()).await.unwrap_err();
        assert!(
            matches!(&error, ToolError::InvalidArguments { tool, .. } if tool == "greet"),
            "{arguments}: {error:?}"
        );
        let text = error.to_string();
        assert!(
            text.starts_with("invalid arguments for `greet`: ") && text.contains(expected),
            "{arguments}: {text}"
        );
    }
    assert!(!p.path(".corvid/tools/greet/ran").exists());
    let output = call(&offer, "greet", json!({"name": "ada"})).await.unwrap();
    assert!(output.text.contains(r#"{"name":"ada"}"#), "{}", output.text);
}

#[tokio::test]
async fn an_invalid_manifest_gives_a_notice_and_everything_else_still_works() {
    let p = project();
    tool(&p, "good", "echo good", any_object());
    p.write(".corvid/tools/bad/tool.json", "{\"name\": \"bad\", ");
    // A custom tool may not take a built-in's name.
    tool(&p, "bash", "echo impostor", any_object());
    let toolbox = toolbox(&p);
    let offered = toolbox.offer().await;
    let names: Vec<&str> = offered
        .offer
        .specs()
        .map(|spec| spec.name.as_str())
        .collect();
    assert!(
        names.contains(&"good") && names.contains(&"read"),
        "{names:?}"
    );
    assert_eq!(names.iter().filter(|name| **name == "bash").count(), 1);
    assert_eq!(offered.offer.spec("bash").unwrap().kind, ToolKind::Command);
    assert_eq!(offered.notices.len(), 2, "{:?}", offered.notices);
    assert!(
        offered.notices[0].starts_with(
            "skipped the custom tool .corvid/tools/bad/tool.json: it is not valid JSON"
        ),
        "{:?}",
        offered.notices
    );
    assert_eq!(
        offered.notices[1],
        "the custom tool `bash` is not offered: a built-in tool has that name"
    );
    let output = call(&offered.offer, "good", json!({})).await.unwrap();
    assert!(output.text.contains("good"), "{}", output.text);
    let output = call(&offered.offer, "bash", json!({"command": "echo real"}))
        .await
        .unwrap();
    assert!(output.text.contains("real"), "{}", output.text);
    // Shown once while it lasts.
    assert!(toolbox.offer().await.notices.is_empty());
}

#[tokio::test]
async fn tools_are_discovered_at_each_offer() {
    let p = project();
    let toolbox = toolbox(&p);
    assert!(toolbox.offer().await.offer.spec("late").is_none());
    tool(&p, "late", "echo late", any_object());
    let offer = toolbox.offer().await.offer;
    assert_eq!(offer.spec("late").unwrap().description, "The late tool.");
    std::fs::remove_dir_all(p.path(".corvid/tools/late")).unwrap();
    assert!(toolbox.offer().await.offer.spec("late").is_none());
}

#[tokio::test]
async fn the_command_gets_the_runners_timeout_and_output_cap() {
    let limits = ToolLimits {
        default_timeout: Duration::from_millis(300),
        output_bytes: 2_000,
        ..ToolLimits::default()
    };
    let p = project_with(limits);
    tool(&p, "slow", "sleep 20", any_object());
    tool(
        &p,
        "loud",
        "head -c 100000 /dev/zero | tr '\\0' a",
        any_object(),
    );
    let offer = toolbox(&p).offer().await.offer;
    let output = call(&offer, "slow", json!({})).await.unwrap();
    assert!(
        output.is_error && output.text.contains("Timed out"),
        "{}",
        output.text
    );
    let output = call(&offer, "loud", json!({})).await.unwrap();
    assert!(output.text.len() < 4_000, "{} bytes", output.text.len());
    let Some(ToolDetail::Command {
        log_path: Some(log),
        ..
    }) = output.detail
    else {
        panic!("no log file: {:?}", output.detail);
    };
    assert_eq!(std::fs::metadata(log).unwrap().len(), 100_000);
}
