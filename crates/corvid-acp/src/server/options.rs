//! A session's settings: `session/set_config_option` (mode, model) and `session/set_mode`.

use agent_client_protocol::Error;
use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    SessionConfigOption, SessionConfigOptionValue, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse, SetSessionModeRequest, SetSessionModeResponse,
};
use corvid_protocol::Op;

use super::Server;
use super::live::Live;
use crate::options::{self, MODE, MODEL, Mode};

impl Server {
    pub(super) fn set_config_option(
        &self,
        request: SetSessionConfigOptionRequest,
        responder: Responder<SetSessionConfigOptionResponse>,
    ) -> Result<(), Error> {
        let id = request.session_id.0.to_string();
        // Both options are lists of ids; any other kind of value names none of them.
        let value = match &request.value {
            SessionConfigOptionValue::ValueId { value } => value.0.to_string(),
            _ => String::new(),
        };
        self.with_live(&id, responder, |live, responder| {
            match live.set_option(request.config_id.0.as_ref(), &value) {
                Ok(options) => responder.respond(SetSessionConfigOptionResponse::new(options)),
                Err(error) => {
                    responder.respond_with_error(Error::invalid_params().data(error.to_string()))
                }
            }
        })
    }

    pub(super) fn set_mode(
        &self,
        request: SetSessionModeRequest,
        responder: Responder<SetSessionModeResponse>,
    ) -> Result<(), Error> {
        let id = request.session_id.0.to_string();
        self.with_live(&id, responder, |live, responder| {
            match live.set_option(MODE, request.mode_id.0.as_ref()) {
                Ok(_) => responder.respond(SetSessionModeResponse::new()),
                Err(error) => {
                    responder.respond_with_error(Error::invalid_params().data(error.to_string()))
                }
            }
        })
    }
}

/// Why a mode or config option was not set (sent to the editor as invalid params).
#[derive(Debug, thiserror::Error)]
enum OptionError {
    #[error("unknown mode `{0}`: expected read-only, plan, ask, auto-edit or full-auto")]
    UnknownMode(String),
    #[error("the model name is empty")]
    EmptyModel,
    #[error("unknown config option `{0}`: expected mode or model")]
    UnknownOption(String),
}

impl Live {
    fn set_option(&self, id: &str, value: &str) -> Result<Vec<SessionConfigOption>, OptionError> {
        let mut state = self.state.lock();
        match id {
            MODE => {
                let mode =
                    Mode::parse(value).ok_or_else(|| OptionError::UnknownMode(value.to_owned()))?;
                state.mode = mode;
                self.link.submit(Op::SetApprovalPolicy {
                    policy: mode.policy(),
                });
            }
            MODEL => {
                if value.trim().is_empty() {
                    return Err(OptionError::EmptyModel);
                }
                state.model = value.to_owned();
                self.link.submit(Op::SetModel {
                    model: value.to_owned(),
                });
            }
            other => {
                return Err(OptionError::UnknownOption(other.to_owned()));
            }
        }
        Ok(options::config_options(
            state.mode,
            &state.model,
            &self.models,
            &self.sandbox,
        ))
    }
}
