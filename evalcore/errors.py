"""The one exception type for errors a user can cause and fix."""

from __future__ import annotations

from os import PathLike


class EvalcoreError(Exception):
    """Bad input a user can fix: a missing file, a malformed row, an unknown parameter.

    The message names what is wrong and where (file, line, field). The CLI prints it and
    exits with status 2.

    Args:
        message: What is wrong, in plain words.
        path: The file concerned, if any.
        line: The 1-based line number in ``path``, if any.
        field: The field (column, key, parameter) concerned, if any.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | PathLike[str] | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.reason = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        where = ""
        if self.path is not None:
            where = self.path + (f", line {line}" if line is not None else "")
        if field is not None:
            where = f"{where}, field '{field}'" if where else f"field '{field}'"
        super().__init__(f"{where}: {message}" if where else message)

    def _render_traceback_(self) -> list[str]:
        """IPython shows this instead of a traceback: the one-line message a user acts on.

        Under papermill (a notebook run by hand with a bad ``-p`` value) the line is also
        written to the kernel's own stderr, the terminal papermill runs in, so it comes
        before papermill's traceback instead of at its bottom. ``%tb`` shows the full
        traceback in a notebook.
        """
        import sys

        line = f"{type(self).__name__}: {self}"
        stream = sys.__stderr__
        if stream is not None and not getattr(self, "_evalcore_told", False):
            self._evalcore_told = True  # IPython renders it more than once
            try:
                stream.write(f"\nevalcore: error: {self}\n")
                stream.flush()
            except (OSError, ValueError):
                pass
        return [f"\x1b[0;31m{line}\x1b[0m", "(a problem with the input or the parameters; %tb shows the traceback)"]
