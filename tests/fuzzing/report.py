"""The findings file: one section per failure class, rewritten as the run goes, so the people fixing
the front ends, the analysis and the CLI can pick up a class and its reproducer while the run is
still looking for more."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from .harness import Outcome


@dataclass
class Klass:
    key: str
    area: str
    first: int
    last_line: str
    detail: str
    count: int = 0
    examples: list[int] = field(default_factory=list)
    repro: str = ""
    repro_size: int = 0
    number: int = 0  # order of discovery: names the reproducer's folder for good
    status: str = ""  # set by a replay against a later tree: open, fixed, or changed


@dataclass
class Findings:
    path: Path
    cases_dir: Path
    command: str
    classes: dict[str, Klass] = field(default_factory=dict)
    seconds: list[tuple[float, int, int]] = field(default_factory=list)  # (s, bytes, case) of the slowest
    done: int = 0
    elapsed: float = 0.0
    note: str = ""  # a line under the header: e.g. which tree a replay judged

    def add(self, index: int, out: Outcome) -> bool:
        """Record one outcome; True when it opens a new class."""
        self.seconds.append((out.seconds, out.size, index))
        self.seconds = sorted(self.seconds, reverse=True)[:5]
        if out.ok or out.failure is None:
            return False
        k = self.classes.get(out.failure)
        new = k is None
        if k is None:
            k = Klass(out.failure, out.area, index, out.last_line, out.detail, number=len(self.classes) + 1)
            self.classes[out.failure] = k
        k.count += 1
        if len(k.examples) < 8:
            k.examples.append(index)
        if new:
            self.write(None, None)
        return new

    def repro_dir(self, key: str) -> Path:
        k = self.classes[key]
        body = re.sub(r"[^A-Za-z0-9]+", "-", key.split("@")[0] + "-" + key.rsplit(":", 1)[-1])[:60].strip("-")
        return self.cases_dir / f"{k.number:02d}-{k.area.replace('/', '-')}-{body}"

    def set_repro(self, key: str, path: str, size: int) -> None:
        self.classes[key].repro, self.classes[key].repro_size = path, size
        self.write(None, None)

    def summary_line(self, done: int, elapsed: float) -> str:
        failing = sum(k.count for k in self.classes.values())
        return f"{done} cases in {elapsed:.0f} s: {failing} failing, {len(self.classes)} classes"

    def write(self, done: int | None, elapsed: float | None, final: bool = False) -> None:
        if done is not None:
            self.done, self.elapsed = done, elapsed or 0.0
        done, elapsed = self.done, self.elapsed
        lines = [
            "# Fuzz findings: irscan's error contract",
            "",
            f"Command: `python -m tests.fuzzing {self.command}` ({'finished' if final else 'running'}; "
            f"updated {time.strftime('%Y-%m-%d %H:%M:%S')}).",
            f"{done} cases in {elapsed or 0:.0f} s; {sum(k.count for k in self.classes.values())} failed, in "
            f"{len(self.classes)} classes. Slowest cases (s, bytes, case#): "
            + ", ".join(f"{s:.2f} s / {b // 1024} KB #{i}" for s, b, i in self.seconds),
            *(["", self.note, ""] if self.note else [""]),
            "Contract per case: `irscan scan PATH` exits 0/1, or 2 with `PATH:line:col: error: ...`; no "
            "traceback, no exit 3, under the per-case timeout. A class is the exception type plus the "
            "innermost irscan frame (or the kind of breach). Rebuild any case: "
            "`python -c 'from tests.fuzzing.run import build_case; ...'` with its number; rerun the saved "
            "reproducers with `python -m tests.fuzzing --recheck DIR`.",
            "",
        ]
        still = [k for k in self.classes.values() if k.status.startswith("open")]
        if any(k.status for k in self.classes.values()):
            lines += [f"**Open now: {len(still)} of {len(self.classes)} classes**"]
            lines += [f"- {k.number}. `{k.key}` ({k.area}): `{k.repro}`" for k in still] + [""]
        for k in sorted(self.classes.values(), key=lambda k: (k.area, k.number)):
            lines += [
                f"## {k.number}. `{k.key}`",
                "",
                f"- area: **{k.area}**; {k.count} case(s), first #{k.first}, e.g. {', '.join(map(str, k.examples))}",
                f"- reproducer: `{k.repro}` ({k.repro_size} bytes): `irscan scan {k.repro}`"
                if k.repro
                else f"- reproducer: none saved ({'no longer fails' if k.status else 'being saved'})",
                f"- last line: `{k.last_line}`",
                *([f"- status: **{k.status}**"] if k.status else []),
                "",
                "```",
                k.detail.strip()[-1500:],
                "```",
                "",
            ]
        self.path.write_text("\n".join(lines) + "\n")
        state = {"run": {"command": self.command, "done": done, "elapsed": elapsed, "final": final,
                         "slowest": self.seconds},
                 "classes": {key: vars(k) for key, k in self.classes.items()}}  # fmt: skip
        self.path.with_suffix(".json").write_text(json.dumps(state, indent=1) + "\n")

    @classmethod
    def load(cls, state_path: Path, path: Path, cases_dir: Path) -> Findings:
        """The findings of an earlier run, from the .json it wrote beside its .md."""
        state = json.loads(state_path.read_text())
        run = state.get("run", {}) if "classes" in state else {}
        classes = state.get("classes", state)
        f = cls(path, cases_dir, run.get("command", f"(replayed from {state_path})"))
        f.classes = {key: Klass(**fields) for key, fields in classes.items()}
        f.done, f.elapsed = run.get("done") or 0, run.get("elapsed") or 0.0
        f.seconds = [tuple(x) for x in run.get("slowest", [])]
        return f
