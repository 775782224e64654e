"""The twocats command on a pseudo-terminal, answering each hidden password prompt."""

from __future__ import annotations

import os
import pty
import select
import shutil
import time


def prompt_run(args: list[str], answer: bytes, env: dict[str, str]) -> tuple[int, bytes]:
    """Run twocats on a new pseudo-terminal, writing `answer` at each password prompt.

    Returns the exit status and everything the terminal showed.  `answer` is what is typed, the
    line ending included (``b"pw\\n"``), or a control character such as Ctrl-C (``b"\\x03"``).
    """
    program = shutil.which("twocats")
    assert program is not None
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child process
        os.execve(program, [program, *args], {**os.environ, **env})
    output, answered = b"", 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
        if output.count(b"Password") + output.count(b"Repeat") > answered:
            os.write(fd, answer)
            answered += 1
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), output
