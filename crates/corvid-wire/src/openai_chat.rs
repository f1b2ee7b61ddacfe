//! The openai_chat codec (see CODECS.md).
