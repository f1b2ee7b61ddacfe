//! The one reply each operation gets: what it produced (a diff, the servers, the conversation
//! list), or why it was not carried out.

use corvid_protocol::{Reply, ReplyOk, ReplyOutcome, ServerFrame};
use ratatui::style::{Color, Style};
use ratatui::text::Line;

use super::App;
use crate::render;

impl App {
    /// One frame from the link: an event, a request from the agent, or the reply to an
    /// operation.
    pub fn frame(&mut self, frame: ServerFrame) {
        match frame {
            ServerFrame::Event(event) => self.event(event),
            ServerFrame::Request(request) => self.request(request),
            ServerFrame::Reply(reply) => self.reply(reply),
            // The in-process link sends no hello.
            ServerFrame::Protocol(_) => {}
        }
    }

    /// The reply to an operation this chat sent.
    pub fn reply(&mut self, reply: Reply) {
        let for_picker = self.overlay.picker_request.as_deref() == Some(reply.id.as_str());
        if for_picker {
            self.overlay.picker_request = None;
        }
        match reply.outcome {
            ReplyOutcome::Error(error) => self.error(error, 0),
            ReplyOutcome::Ok(ok) => self.replied(ok, for_picker),
        }
    }

    fn replied(&mut self, ok: ReplyOk, for_picker: bool) {
        match ok {
            ReplyOk::Conversations {
                conversations,
                current,
            } => self.conversation_list(for_picker, conversations, current),
            ReplyOk::Diff { turns } if turns.is_empty() => {
                self.note("no changes by the agent in this conversation")
            }
            ReplyOk::Diff { turns } => {
                for turn in turns {
                    self.say(Line::styled(
                        format!("── turn {} ──", turn.turn),
                        Style::new().fg(Color::Cyan),
                    ));
                    self.output.extend(render::diff(&turn.diff));
                }
            }
            ReplyOk::ToolServers { servers } => self.tool_servers(servers),
            ReplyOk::UserMessages { messages } => self.user_messages(for_picker, messages),
            ReplyOk::Rewound {
                text,
                removed,
                files,
            } => self.rewound(&text, removed, &files),
            ReplyOk::Forked {
                conversation_id,
                text,
            } => self.forked(conversation_id, text),
            ReplyOk::Permissions { rules, message } => {
                if let Some(message) = message {
                    self.note(message);
                }
                for line in corvid_protocol::describe_rules(&rules) {
                    self.say(Line::raw(line));
                }
            }
            ReplyOk::Nothing { message } => self.note(message),
            // The events say the rest (`undone`, `compacted`, `settings_changed`, the opened
            // conversation's replay, the turn).
            ReplyOk::Done
            | ReplyOk::Accepted
            | ReplyOk::Ready(_)
            | ReplyOk::Settings { .. }
            | ReplyOk::Opened { .. }
            | ReplyOk::Undone { .. }
            | ReplyOk::Compacted { .. } => {}
        }
    }
}
