"""A stderr that says it is a terminal, as it is when a person runs a command (progress bars show)."""

from io import StringIO


class TerminalStringIO(StringIO):
    def isatty(self) -> bool:
        return True
