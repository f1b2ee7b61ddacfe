//! The openai_responses codec (see CODECS.md).
