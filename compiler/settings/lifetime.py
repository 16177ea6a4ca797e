"""Whether this process ends with its one command (the krc executable: `cli.run`) or runs command after command
(the tests, an in-process caller). A process that ends with its command may let go of what the command no longer
needs before the command returns (client.engine_done); the other kind keeps it for the next command."""
from __future__ import annotations

_one_command = False


def ends_with_command() -> None:
    """Called by the krc executable before its command runs."""
    global _one_command
    _one_command = True


def one_command() -> bool:
    return _one_command
