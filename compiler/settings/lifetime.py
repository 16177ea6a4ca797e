"""Whether this process ends with its one command (the krc executable: `cli.run`) or runs command after command
(the tests, an in-process caller). A process that ends with its command may let go of what the command no longer
needs before the command returns (client.engine_done); the other kind keeps it for the next command."""
from __future__ import annotations

_ONE_COMMAND = [False]


def ends_with_command() -> None:
    """Called by the krc executable before its command runs."""
    _ONE_COMMAND[0] = True


def one_command() -> bool:
    return _ONE_COMMAND[0]
