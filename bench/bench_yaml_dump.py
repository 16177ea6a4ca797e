"""Writing the YAML files of one rendered environment (the golden files of prod-eks-gpu, loaded once): the text
writer (yaml_text, what yamlio.dump takes first) against the emitter's events (yaml_emit, the path before it) and
PyYAML's dumper, all measured in this run on the same documents, which each writes byte for byte as the files are.

Warm: every scalar already known (a long-lived process, or an environment after many others). Cold: every cache
of both paths emptied first (the events, the resolver's answers, the text writer's scalars), as for the first
environment a process writes; "after dev": the dev environment written first, from empty caches.

Run: .venv/bin/python bench/bench_yaml_dump.py
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from timing import best_of  # bench/timing.py, beside this script

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from compiler.documents import yaml_emit, yaml_scalars, yaml_text, yamlio  # noqa: E402

GOLDEN = ROOT / "tests" / "fixtures" / "project" / "golden"
ROUNDS = 30  # alternating between the paths, so drift of the host's load touches both alike
REPEATS = 20  # writes of the whole environment per timed run (warm)

Writer = Callable[[Any, int], "str | None"]


def pyyaml(document: Any, width: int) -> str:
    return yaml.dump(document, Dumper=yamlio._CanonicalDumper, sort_keys=True, default_flow_style=False,
                     allow_unicode=True, width=width, explicit_start=False)


def forget() -> None:
    """Empty every cache either path keeps."""
    for kept in (yaml_emit._TEXT_EVENTS, yaml_emit._INT_EVENTS, yaml_emit._RESOLVER.plain_tags):
        kept.clear()
    for place in (yaml_scalars.KEYS, yaml_scalars.VALUES, yaml_scalars.ITEMS):
        place.clear()


def environment(name: str) -> tuple[list[Any], list[str]]:
    paths = sorted((GOLDEN / name).rglob("*.yaml"))
    texts = [path.read_text(encoding="utf-8") for path in paths]
    return [yamlio.load(text) for text in texts], texts


def write_all(writer: Writer, documents: list[Any]) -> list[str | None]:
    return [writer(document, yamlio.DUMP_WIDTH) for document in documents]


def best_alternating(writers: dict[str, Callable[[], object]], runs: int = 1) -> dict[str, float]:
    best = dict.fromkeys(writers, float("inf"))
    for _ in range(ROUNDS):
        for name, work in writers.items():
            best[name] = min(best[name], best_of(runs, work))
    return best


def after_forgetting(writer: Writer, documents: list[Any], before: list[Any]) -> float:
    """Seconds to write `documents` from empty caches, once `before` was written."""
    forget()
    write_all(writer, before)
    start = time.perf_counter()
    write_all(writer, documents)
    return time.perf_counter() - start


def main() -> None:
    documents, texts = environment("prod-eks-gpu")
    dev, _ = environment("dev")
    for writer in (yaml_text.plain_text, yaml_emit.plain_text, pyyaml):
        forget()
        assert write_all(writer, documents) == texts, writer  # the same bytes, from empty caches
        assert write_all(writer, documents) == texts, writer  # and from what the first writes left
    print(f"prod-eks-gpu: {len(documents)} files, {sum(map(len, texts)) / 1e3:.1f} kB of YAML")

    warm = best_alternating({
        "text": lambda: [write_all(yaml_text.plain_text, documents) for _ in range(REPEATS)],
        "events": lambda: [write_all(yaml_emit.plain_text, documents) for _ in range(REPEATS)],
    })
    pyyaml_time = best_of(5, lambda: write_all(pyyaml, documents))
    text_ms, events_ms = (warm[name] / REPEATS * 1e3 for name in ("text", "events"))
    print(f"warm:  text writer {text_ms:.3f} ms, emitter events {events_ms:.3f} ms, "
          f"PyYAML's dumper {pyyaml_time * 1e3:.3f} ms per environment")
    print(f"       ratio events/text {events_ms / text_ms:.2f}x, PyYAML/text {pyyaml_time * 1e3 / text_ms:.1f}x")

    for label, before in (("cold", []), ("after dev", dev)):
        text_s = events_s = float("inf")
        for _ in range(ROUNDS * 3):
            text_s = min(text_s, after_forgetting(yaml_text.plain_text, documents, before))
            events_s = min(events_s, after_forgetting(yaml_emit.plain_text, documents, before))
        print(f"{label + ':':10} text writer {text_s * 1e3:.3f} ms, emitter events {events_s * 1e3:.3f} ms, "
              f"ratio events/text {events_s / text_s:.2f}x")

if __name__ == "__main__":
    main()
