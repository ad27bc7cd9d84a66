"""Models: the ChatModel protocol, Completion records and model backends."""

from evalcore.models._types import (
    ChatModel,
    Completion,
    CompletionError,
    GenerationParams,
    Message,
    Usage,
)

__all__ = ["ChatModel", "Completion", "CompletionError", "GenerationParams", "Message", "Usage"]
