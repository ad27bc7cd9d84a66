"""evalcore.suites."""

__all__: list[str] = []
