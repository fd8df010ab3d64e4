"""What a read's planning kept at each pruning stage, for users and tests."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PlanStage:
    name: str
    partitions: int
    file_slices: int | None = None


@dataclass
class PlanExplain:
    """Partitions and file slices kept by each stage of one read's planning."""

    query_type: str
    listing: str = "storage"  # or "metadata table"
    stages: list[PlanStage] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # On an object store: requests the planning sent, and how many round trips
    # it waited for one after another (None on local disk, where reads are not requests).
    requests: int | None = None
    round_trips: int | None = None

    def add(self, name: str, partitions: int, file_slices: int | None = None) -> None:
        self.stages.append(PlanStage(name, partitions, file_slices))

    def note(self, text: str) -> None:
        self.notes.append(text)

    def listed_from(self, source: str) -> None:
        self.listing = source

    def stage(self, name: str) -> PlanStage | None:
        return next((s for s in self.stages if s.name == name), None)

    @property
    def file_slices(self) -> int:
        return next((s.file_slices for s in reversed(self.stages) if s.file_slices is not None), 0)

    def __str__(self) -> str:
        lines = [f"{self.query_type} read, listing from {self.listing}"]
        for s in self.stages:
            files = "" if s.file_slices is None else f", {s.file_slices} file slices"
            lines.append(f"  {s.name:<22} {s.partitions} partitions{files}")
        if self.requests is not None:
            lines.append(f"  storage: {self.requests} requests in {self.round_trips} round trips")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


class NoExplain(PlanExplain):
    """The explain of a read nobody asked about: planning reports to it
    unconditionally, and it keeps nothing."""

    def __init__(self) -> None:
        super().__init__(query_type="")

    def add(self, name: str, partitions: int, file_slices: int | None = None) -> None:
        pass

    def note(self, text: str) -> None:
        pass

    def listed_from(self, source: str) -> None:
        pass
