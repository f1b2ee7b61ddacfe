use crate::model::{
    ChatResponse, FinishReason, Part, Reasoning, StreamEvent, ToolCall, Usage, WireError,
};

/// Collects a stream of events into a whole reply (for a non-streaming client of a streaming
/// upstream), and turns a whole reply back into events (the other way round).
#[derive(Debug, Default)]
pub struct ResponseBuilder {
    id: String,
    model: String,
    parts: Vec<Part>,
    /// Index into `parts` of each tool call, by stream index.
    tool_slots: Vec<(u32, usize)>,
    finish: Option<FinishReason>,
    usage: Usage,
    error: Option<WireError>,
}

impl ResponseBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies one event.
    pub fn push(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::Start { id, model } => {
                self.id.clone_from(id);
                self.model.clone_from(model);
            }
            StreamEvent::TextDelta { text } => match self.parts.last_mut() {
                Some(Part::Text { text: last }) => last.push_str(text),
                _ => self.parts.push(Part::Text { text: text.clone() }),
            },
            StreamEvent::ReasoningDelta { text } => match self.open_reasoning() {
                Some(reasoning) => reasoning.text.push_str(text),
                None => self.parts.push(Part::Reasoning(Reasoning {
                    text: text.clone(),
                    ..Reasoning::default()
                })),
            },
            StreamEvent::ReasoningSignature { signature } => match self.last_reasoning() {
                Some(reasoning) => reasoning.signature = Some(signature.clone()),
                None => self.parts.push(Part::Reasoning(Reasoning {
                    signature: Some(signature.clone()),
                    ..Reasoning::default()
                })),
            },
            StreamEvent::ReasoningEncrypted { data, id } => match self.last_reasoning() {
                Some(reasoning) if reasoning.encrypted.is_none() => {
                    reasoning.encrypted = Some(data.clone());
                    if reasoning.id.is_none() {
                        reasoning.id.clone_from(id);
                    }
                }
                _ => self.parts.push(Part::Reasoning(Reasoning {
                    encrypted: Some(data.clone()),
                    id: id.clone(),
                    ..Reasoning::default()
                })),
            },
            StreamEvent::ToolCallStart {
                index,
                id,
                name,
                signature,
            } => {
                self.tool_slots.push((*index, self.parts.len()));
                self.parts.push(Part::ToolCall(ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: String::new(),
                    signature: signature.clone(),
                }));
            }
            StreamEvent::ToolCallArgs { index, delta } => {
                if let Some(Part::ToolCall(call)) = self.tool_part(*index) {
                    call.arguments.push_str(delta);
                }
            }
            StreamEvent::ToolCallEnd { .. } => {}
            StreamEvent::Usage(usage) => self.usage = *usage,
            StreamEvent::Finish(reason) => self.finish = Some(*reason),
            StreamEvent::Error(error) => self.error = Some(error.clone()),
        }
    }

    /// The reply, or the error the stream ended with. A reply that never said why it ended
    /// counts as ended by tool calls when it made some, else as a natural end.
    pub fn finish(self) -> Result<ChatResponse, WireError> {
        if let Some(error) = self.error {
            return Err(error);
        }
        let made_calls = self
            .parts
            .iter()
            .any(|part| matches!(part, Part::ToolCall(_)));
        let finish = match self.finish {
            _ if made_calls => FinishReason::ToolCalls,
            Some(reason) => reason,
            None => FinishReason::EndTurn,
        };
        let mut parts = self.parts;
        for part in &mut parts {
            if let Part::ToolCall(call) = part
                && call.arguments.trim().is_empty()
            {
                call.arguments = "{}".to_owned();
            }
        }
        Ok(ChatResponse {
            id: self.id,
            model: self.model,
            created: 0,
            parts,
            finish,
            usage: self.usage,
        })
    }

    /// The events that stream `response`, in canonical order.
    pub fn events(response: &ChatResponse) -> Vec<StreamEvent> {
        let mut events = vec![StreamEvent::Start {
            id: response.id.clone(),
            model: response.model.clone(),
        }];
        let mut tool_index = 0;
        for part in &response.parts {
            match part {
                Part::Text { text } => events.push(StreamEvent::TextDelta { text: text.clone() }),
                Part::Reasoning(reasoning) => {
                    if !reasoning.text.is_empty() {
                        events.push(StreamEvent::ReasoningDelta {
                            text: reasoning.text.clone(),
                        });
                    }
                    if let Some(signature) = &reasoning.signature {
                        events.push(StreamEvent::ReasoningSignature {
                            signature: signature.clone(),
                        });
                    }
                    if let Some(data) = &reasoning.encrypted {
                        events.push(StreamEvent::ReasoningEncrypted {
                            data: data.clone(),
                            id: reasoning.id.clone(),
                        });
                    }
                }
                Part::ToolCall(call) => {
                    events.push(StreamEvent::ToolCallStart {
                        index: tool_index,
                        id: call.id.clone(),
                        name: call.name.clone(),
                        signature: call.signature.clone(),
                    });
                    events.push(StreamEvent::ToolCallArgs {
                        index: tool_index,
                        delta: call.arguments.clone(),
                    });
                    events.push(StreamEvent::ToolCallEnd { index: tool_index });
                    tool_index += 1;
                }
                Part::Image(_) | Part::ToolResult(_) | Part::System { .. } => {}
            }
        }
        events.push(StreamEvent::Usage(response.usage));
        events.push(StreamEvent::Finish(response.finish));
        events
    }

    fn tool_part(&mut self, index: u32) -> Option<&mut Part> {
        let slot = self
            .tool_slots
            .iter()
            .rev()
            .find(|(stream_index, _)| *stream_index == index)?
            .1;
        self.parts.get_mut(slot)
    }

    /// The reasoning part still being streamed: the last part, if it is reasoning.
    fn open_reasoning(&mut self) -> Option<&mut Reasoning> {
        match self.parts.last_mut() {
            Some(Part::Reasoning(reasoning))
                if reasoning.signature.is_none() && reasoning.encrypted.is_none() =>
            {
                Some(reasoning)
            }
            _ => None,
        }
    }

    fn last_reasoning(&mut self) -> Option<&mut Reasoning> {
        match self.parts.last_mut() {
            Some(Part::Reasoning(reasoning)) => Some(reasoning),
            _ => None,
        }
    }
}
