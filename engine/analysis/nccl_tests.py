"""Reading the standard output of NVIDIA/nccl-tests into a measured run.

A measured run is how a user checks FabricLab's curves against their own cluster, so the
reader takes what people actually paste: the whole console log of all_reduce_perf,
all_gather_perf, reduce_scatter_perf, alltoall_perf, sendrecv_perf, broadcast_perf or
reduce_perf, with MPI warnings and ``NCCL_DEBUG=INFO`` lines in between, from any version
since the columns were ``bytes N type op``. Lines starting with ``#`` are comments: the
``# nThread ...`` line, one ``#  Rank N ... device D [bus] GPU NAME`` line per rank (they
are counted; the names give the GPU), the column headers, and in newer versions
``# nccl-tests version X nccl-headers=H nccl-library=L`` and ``# Collective test starting:
all_reduce_perf``. The table is a run of rows: size in bytes, element count, data type,
then the reduction and the root when the version prints them, then time (µs), algbw and
busbw (GB/s) and ``#wrong`` out-of-place, and the same in-place when printed. It starts at
its column header (or at its first row: a line of at least 7 words whose first is a number)
and ends at the next ``#`` line; inside it every line whose first word is a number is a row
and must read as one. Other lines are skipped. A ``0: `` or ``[1,0]<stdout>:`` rank label that
``srun -l`` or ``mpirun --tag-output`` puts before each line is dropped first.

Anything that cannot be read is one `ScenarioError` naming the line and what is wrong (no
table, a row of the wrong width, a word where a number belongs, a negative size, a second
run in the same text); malformed text never raises anything else. Output that does not
say which collective ran, when the caller did not either, is its subclass
`OpNotNamedError`, so a front end can ask for the op and try again.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from engine.analysis.results.measured import NcclTestsPoint, NcclTestsRun, NcclTestsTiming
from engine.model.errors import Problem, ScenarioError

#: nccl-tests' programs (without ``_perf``) and FabricLab's name for their collective.
TEST_OPS: dict[str, str] = {
    "all_reduce": "all-reduce",
    "all_gather": "all-gather",
    "reduce_scatter": "reduce-scatter",
    "alltoall": "all-to-all",
    "sendrecv": "send-recv",
    "broadcast": "broadcast",
    "reduce": "reduce",
}
#: nccl-tests' programs FabricLab has no model of (named when one is met).
UNMODELLED = ("gather", "scatter", "hypercube")

_LABEL = re.compile(r"^\s*(?:\d+:|\[\d+,\d+\]<std(?:out|err)>:)\s?")
_PROGRAM = re.compile(r"\b([a-z_]+)_perf\b")
_STARTING = re.compile(r"Collective test starting:\s*([a-z_]+)_perf\b")
_RANK = re.compile(r"^#\s*Rank\s+(\d+)\b.*?\bdevice\s+\d+\s+\[[^\]]*\]\s*(.*?)\s*$")
_THREADS = re.compile(r"^#\s*nThread\b")
_NCCL_VERSION = re.compile(r"NCCL version\s+(\d+\.\d+\.\d+)")
_LIBRARY_CODE = re.compile(r"nccl-library=(\d+)")
_HEADER_WORDS = {"size", "bytes"}
#: Outside a table, a line that starts with a number is a row only if it is this wide (a
#: short "3 nodes allocated" is log noise; inside a table every such line is a row).
MIN_ROW_WORDS = 7
# A row: size, count, type, then 0-2 labels (redop, root), then 4 or 8 figures.
_LABELS_AND_FIGURES = {4: (0, 1), 5: (1, 1), 6: (2, 1), 8: (0, 2), 9: (1, 2), 10: (2, 2)}
_ROW_SHAPE = (
    "size, count, type, [redop], [root], then time, algbw, busbw and #wrong out-of-place "
    "(and again in-place)"
)


class OpNotNamedError(ScenarioError):
    """The output does not say which collective ran (older versions print no program
    name): the caller asks the user for the op and reads the text again with it."""


def _problem(source: str, line: int | None, message: str) -> ScenarioError:
    """The one error of the reader: where (source and line) and what is wrong."""
    where = source or "nccl-tests output"
    return ScenarioError(Problem(f"{where} line {line}" if line else where, message))


def op_name(name: str) -> str:
    """FabricLab's name of a collective given as FabricLab (``all-reduce``) or nccl-tests
    (``all_reduce_perf``, ``allreduce``) names it; `ScenarioError` for any other.

    Lets the caller say which test ran in whichever spelling they have at hand.
    """
    key = name.strip().lower().removesuffix("_perf").replace("-", "").replace("_", "")
    for program, op in TEST_OPS.items():
        if key in (program.replace("_", ""), op.replace("-", "")):
            return op
    if key in ("alltoall", "a2a"):
        return "all-to-all"
    choices = ", ".join(TEST_OPS.values())
    raise ScenarioError(Problem("op", f"unknown collective {name!r}; use one of {choices}"))


def _program_op(program: str, source: str, line: int) -> str:
    """The op of an nccl-tests program name met in the text (``all_gather``)."""
    if program in TEST_OPS:
        return TEST_OPS[program]
    raise _problem(
        source,
        line,
        f"{program}_perf is not a collective FabricLab models; it models "
        + ", ".join(f"{p}_perf" for p in TEST_OPS),
    )


def _library_version(code: int) -> str:
    """NCCL's version from its ``NCCL_VERSION_CODE`` (22105 is 2.21.5; before 2.9, 2804 is
    2.8.4), as nccl-tests prints it in ``nccl-library=``."""
    if code >= 10000:
        return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
    return f"{code // 1000}.{code % 1000 // 100}.{code % 100}"


def _number(word: str, what: str, source: str, line: int) -> float:
    """A finite, non-negative figure of a row, or the error naming the column."""
    try:
        value = float(word)
    except ValueError:
        raise _problem(source, line, f"{what} {word!r} is not a number") from None
    if not math.isfinite(value):
        raise _problem(source, line, f"{what} {word!r} is not a finite number")
    if value < 0:
        raise _problem(source, line, f"{what} {word!r} is negative")
    return value


def _whole(word: str, what: str, source: str, line: int) -> int:
    """A whole, non-negative count of a row (size in bytes, element count)."""
    try:
        value = int(word)
    except ValueError:
        try:
            float(word)
        except ValueError:
            raise _problem(source, line, f"{what} {word!r} is not a number") from None
        raise _problem(source, line, f"{what} {word!r} is not a whole number") from None
    if value < 0:
        raise _problem(source, line, f"{what} {word} is negative")
    return value


def _wrong(word: str, what: str, source: str, line: int) -> int | None:
    """``#wrong``: a count, ``N/A`` when not checked (``None``), or in versions before
    ``#wrong`` the largest error as a float (kept as ``None``: it is not a count)."""
    if word.upper() == "N/A":
        return None
    try:
        return _whole(word, what, source, line)
    except ScenarioError:
        _number(word, what, source, line)
        return None


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


def _starts_row(word: str) -> bool:
    """Whether a line's first word can begin a table row: a number written with digits
    (``nan`` or ``Infinity`` opening a log line do not)."""
    head = word.lstrip("+-")[:2]
    return _is_number(word) and (head[:1].isdigit() or (head[:1] == "." and head[1:].isdigit()))


@dataclass
class _Reading:
    """What the reader has gathered so far, line by line."""

    source: str
    ranks: dict[int, str] = field(default_factory=dict)
    points: list[NcclTestsPoint] = field(default_factory=list)
    width: int = 0  # the words of each row of this table
    width_line: int = 0  # the line that set it (a header or the first row)
    width_said: str = ""  # "the column header" or "the first row"
    dtype: str = ""
    labels: tuple[str, ...] = ()
    labels_line: int = 0
    started: str = ""  # the op the "Collective test starting" line names
    started_line: int = 0
    programs: dict[str, int] = field(default_factory=dict)  # program -> first line naming it
    nccl_version: str | None = None
    library_version: str | None = None
    ended: int = 0  # the first comment line after the rows: the table ends there

    @property
    def in_table(self) -> bool:
        """Between a column header (or the first row) and the comment line that ends it."""
        return bool(self.width) and not self.ended

    def comment(self, text: str, line: int) -> None:
        """A ``#`` line: ranks, headers, versions, the start of a run, the table's end."""
        if self.points and not self.ended:
            self.ended = line
        rank = _RANK.match(text)
        if rank is not None:
            self._before_rows(line, "a rank line")
            self.ranks.setdefault(int(rank.group(1)), rank.group(2))
            return
        if _THREADS.match(text):
            self._before_rows(line, "a '# nThread' line")
            # a run that stopped before its table, then another: the later one is the run
            self.ranks.clear()
            self.width = 0
            return
        words = text.lstrip("#").split()
        if words and words[0].lower() in _HEADER_WORDS and len(words) - 3 in _LABELS_AND_FIGURES:
            self._before_rows(line, "a column header")
            self.width, self.width_line = len(words), line
            self.width_said = "the column header"
            return
        started = _STARTING.search(text)
        if started is not None:
            self._before_rows(line, "a 'Collective test starting' line")
            self.started, self.started_line = started.group(1), line
        code = _LIBRARY_CODE.search(text)
        if code is not None and self.library_version is None:
            self.library_version = _library_version(int(code.group(1)[:9]))

    def _before_rows(self, line: int, what: str) -> None:
        """Refuse the heading of another run once this one's table has begun."""
        if self.points:
            raise self._second_run(line, what)

    def _second_run(self, line: int, what: str = "a '# nThread' line") -> ScenarioError:
        return _problem(
            self.source,
            line,
            f"{what} after the table: the text holds more than one nccl-tests run; "
            "import one run at a time",
        )

    def row(self, words: list[str], line: int) -> None:
        """A table row: checked against the table's width, read into a point."""
        src = self.source
        if self.ended:
            raise _problem(
                src,
                line,
                f"a table row after the table ended (line {self.ended}): the text holds more "
                "than one table; import one run at a time",
            )
        if len(words) - 3 not in _LABELS_AND_FIGURES:
            raise _problem(
                src,
                line,
                f"a table row of {len(words)} columns; nccl-tests rows have 7 to 13 ({_ROW_SHAPE})",
            )
        if self.width and len(words) != self.width:
            raise _problem(
                src,
                line,
                f"a table row of {len(words)} columns, but {self.width_said} (line "
                f"{self.width_line}) has {self.width}",
            )
        if not self.width:
            self.width, self.width_line = len(words), line
            self.width_said = "the first row"
        size = _whole(words[0], "size", src, line)
        count = _whole(words[1], "count", src, line)
        if _is_number(words[2]):
            raise _problem(
                src, line, f"column 3 is the data type (float, half...), not the number {words[2]}"
            )
        n_labels, n_timings = _LABELS_AND_FIGURES[len(words) - 3]
        labels = (words[2].lower(), *(w.lower() for w in words[3 : 3 + n_labels]))
        if not self.points:
            self.dtype, self.labels, self.labels_line = words[2], labels, line
        elif labels != self.labels:
            raise _problem(
                src,
                line,
                f"a row of {' '.join(labels)} after rows of {' '.join(self.labels)} (line "
                f"{self.labels_line}); import one data type and reduction per run",
            )
        figures = words[3 + n_labels :]
        timings = []
        for i, place in enumerate(("out-of-place", "in-place")[:n_timings]):
            time_us, algbw, busbw, wrong = figures[4 * i : 4 * i + 4]
            timings.append(
                NcclTestsTiming(
                    time_s=_number(time_us, f"{place} time", src, line) / 1e6,
                    algbw_GBps=_number(algbw, f"{place} algbw", src, line),
                    busbw_GBps=_number(busbw, f"{place} busbw", src, line),
                    wrong=_wrong(wrong, f"{place} #wrong", src, line),
                )
            )
        in_place = timings[1] if len(timings) > 1 else None
        self.points.append(NcclTestsPoint(size, count, timings[0], in_place))

    def other(self, text: str, line: int) -> None:
        """A line that is neither comment nor row: look for program names and versions."""
        for program in _PROGRAM.findall(text):
            self.programs.setdefault(program, line)
        version = _NCCL_VERSION.search(text)
        if version is not None and self.nccl_version is None:
            self.nccl_version = version.group(1)

    def op(self, asked: str | None) -> str:
        """The run's op: the caller's, else the one the text names (one, unambiguously)."""
        src = self.source
        if asked is not None:
            op = op_name(asked)
            if self.started and TEST_OPS.get(self.started) != op:
                raise _problem(
                    src,
                    self.started_line,
                    f"the output says {self.started}_perf ran, but op {asked!r} was asked",
                )
            return op
        if self.started:
            return _program_op(self.started, src, self.started_line)
        named = {p: n for p, n in self.programs.items() if p in TEST_OPS or p in UNMODELLED}
        if len(named) == 1:
            ((program, line),) = named.items()
            return _program_op(program, src, line)
        which = (
            f"it names {', '.join(f'{p}_perf' for p in named)}"
            if named
            else "it names no nccl-tests program"
        )
        raise OpNotNamedError(
            Problem(
                src or "nccl-tests output",
                f"cannot tell which collective ran ({which}); give the op "
                f"({', '.join(TEST_OPS.values())})",
            )
        )


def parse_nccl_tests(text: str, source: str = "", op: str | None = None) -> NcclTestsRun:
    """The run in `text`, the standard output of one nccl-tests program (see the module).

    `source` names the text in messages and in the run (a file name); `op` says which
    collective ran (FabricLab's or nccl-tests' name) when the text does not, and is checked
    against the ``Collective test starting`` line when both say. Raises `ScenarioError`
    naming the line and what is wrong; never anything else for malformed text.
    """
    if not isinstance(text, str):
        raise _problem(source, None, f"expected text, got {type(text).__name__}")
    reading = _Reading(source)
    lines = text.split("\n")
    for number, raw in enumerate(lines, start=1):
        line = _LABEL.sub("", raw, count=1).strip()
        if line.startswith("#"):
            reading.comment(line, number)
            reading.other(line, number)
            continue
        words = line.split()
        if words and _starts_row(words[0]) and (reading.in_table or len(words) >= MIN_ROW_WORDS):
            reading.row(words, number)
        elif words:
            reading.other(line, number)
    if not reading.points:
        raise _problem(
            source,
            None,
            f"no nccl-tests table found: none of its {len(lines)} lines is a row of {_ROW_SHAPE}",
        )
    if not reading.ranks:
        raise _problem(
            source,
            None,
            "no '#  Rank N ... device D [bus] GPU' lines, so the number of ranks is unknown; "
            "keep the lines nccl-tests prints under '# Using devices'",
        )
    gpus = list(dict.fromkeys(name for _, name in sorted(reading.ranks.items()) if name))
    return NcclTestsRun(
        op=reading.op(op),
        ranks=len(reading.ranks),
        gpu=" + ".join(gpus),
        nccl_version=reading.nccl_version or reading.library_version,
        dtype=reading.dtype,
        points=tuple(reading.points),
        source=source,
    )
