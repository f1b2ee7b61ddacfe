//! The anthropic codec (see CODECS.md).
