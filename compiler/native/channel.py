"""One conversation with the engine: JSON lines out, answers back by id, in whatever order they finish.

A reader thread hands each answer to its request, and a writer thread writes the requests, in the order they
were submitted: a caller never waits for the engine to read what it sends (a chart's CRDs are megabytes, and an
engine just started reads them only once its runtime is up), and a batch larger than the pipe holds never
deadlocks (the engine answers the first requests while the rest are still being written, and stops reading until
those answers are read). How the conversation is carried (the engine's own pipes, or a worker's connection to
its run's engine) is the subclass's business.
"""
from __future__ import annotations

import queue
import re
import threading
from concurrent.futures import Future
from typing import IO, Any

from .. import jsontext


class EngineEnded(Exception):
    """The engine ended (or spoke nonsense) before it answered: krc's bug or the engine's, exit 3."""

    def __init__(self, detail: str, *, over_memory: bool = False) -> None:
        super().__init__(detail)
        self.detail = detail
        self.over_memory = over_memory


class RawJSON:
    """An argument already encoded as JSON (a CRD's canonical text): put into the request as it is, not parsed
    and encoded again (megabytes per CRD). It holds the text, never a copy (a str subclass would be one)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _encoded_args(args: dict[str, Any]) -> str:
    def dump(value: Any) -> str:
        return jsontext.compact(value)

    return ",".join(f"{dump(k)}:{v.text if isinstance(v, RawJSON) else dump(v)}" for k, v in args.items())


def _line(op: str, ident: int, fields: str) -> bytes:
    return f'{{"id":{ident},"op":{jsontext.compact(op)},"args":{{{fields}}}}}\n'.encode("utf-8", "surrogatepass")


class Answer:
    """An engine answer: a result, or the error the op reported about its input. Read from its JSON line when
    first asked, by whoever asks: answers taken later (a job's validations sent ahead) are held as their text,
    a tenth of the memory the values take, and the reader thread only finds whose answer a line is."""

    def __init__(self, result: Any = None, error: str | None = None, line: bytes | None = None) -> None:
        self._result, self._error, self._line = result, error, line
        self._lock = threading.Lock()

    def _read(self) -> None:
        with self._lock:
            line, self._line = self._line, None
            if line is None:
                return
            try:
                message = jsontext.loads(line)
            except ValueError:
                message = None
            if not isinstance(message, dict):
                shown = line[:300].decode(errors="replace").strip()
                raise EngineEnded(f"the engine answered something krc did not ask: {shown}")
            error = message.get("error")
            self._result, self._error = message.get("result"), error if isinstance(error, str) else None

    @property
    def result(self) -> Any:
        self._read()
        return self._result

    @property
    def error(self) -> str | None:
        self._read()
        return self._error


# how an answer line starts (the engine and the KubeRay builds write the id first): whose answer it is, read
# without decoding the rest
_ANSWER_ID = re.compile(rb'\{"id":([1-9][0-9]{0,17})[,}]')


class Channel:
    def __init__(self, requests: IO[bytes], answers: IO[bytes]) -> None:
        self._requests, self._answers = requests, answers
        self._lock = threading.Lock()  # the requests under way and the id counter
        self._pending: dict[int, Future[Answer]] = {}
        self._next_id = 1
        self._ended: EngineEnded | None = None
        # request lines in the order submitted; None ends the writer once what came before it is written
        self._outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._writer = threading.Thread(target=self._write_requests, name="krc-engine-requests", daemon=True)
        self._writer.start()
        self._reader = threading.Thread(target=self._read_answers, name="krc-engine-answers", daemon=True)
        self._reader.start()

    def submit(self, op: str, args: dict[str, Any]) -> Future[Answer]:
        future: Future[Answer] = Future()
        fields = _encoded_args(args)  # outside the lock: the reader thread takes it for every answer
        with self._lock:
            if self._ended is not None:
                future.set_exception(self._ended)
                return future
            ident, self._next_id = self._next_id, self._next_id + 1
            self._pending[ident] = future
            # queued under the lock: lines go out in the order their ids were given
            self._outbox.put(_line(op, ident, fields))
        return future

    def _write_requests(self) -> None:
        broken = False
        while (line := self._outbox.get()) is not None:
            if broken:
                continue  # drained unwritten: the reader thread fails every request under way
            try:
                self._requests.write(line)
                if self._outbox.empty():  # lines queued meanwhile go out with the next flush
                    self._requests.flush()
            except (OSError, ValueError):
                broken = True

    def finish_writing(self, timeout: float) -> bool:
        """Write every request submitted so far, then close the requests' side (the engine ends once it has
        answered them). False when that was not done within `timeout` seconds (the engine does not read: the
        caller kills it, which ends the write under way)."""
        self._outbox.put(None)
        self._writer.join(timeout)
        if self._writer.is_alive():
            return False
        try:
            self._requests.close()
        except (OSError, ValueError):
            pass
        return True

    def _read_answers(self) -> None:
        try:
            for line in self._answers:
                found = _ANSWER_ID.match(line)
                if found is None:
                    shown = line[:300].decode(errors="replace").strip()
                    self._end(EngineEnded(f"the engine answered something krc did not ask: {shown}"))
                    return
                with self._lock:
                    future = self._pending.pop(int(found[1]), None)
                if future is not None:
                    future.set_result(Answer(line=line))
        except (OSError, ValueError):
            pass
        self._end(None)

    def _end(self, why: EngineEnded | None) -> None:
        """Fail every request under way: the engine ended, or must not be trusted any more."""
        why = why or self.why_ended()
        with self._lock:
            self._ended = self._ended or why
            pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(self._ended)
        self.kill()

    def alive(self) -> bool:
        return self._ended is None

    def why_ended(self) -> EngineEnded:
        return EngineEnded("the krc engine closed the conversation")

    def kill(self) -> None:
        """Stop talking: no more requests (a subclass also ends what the reader thread reads from, which closing
        the reader's file from another thread would not: it waits for the read under way; and what the writer
        thread is writing, which then fails and drops the rest)."""
        self._outbox.put(None)
        try:
            self._requests.close()
        except (OSError, ValueError):
            pass
