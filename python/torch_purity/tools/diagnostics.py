"""MLIR diagnostics as the command-line tools print them: `file:line:col: error: message`."""

from __future__ import annotations

from dataclasses import dataclass, field

from torch_mlir.ir import DiagnosticSeverity

from ..ir_helpers.queries import FILE_LOCATION

SEVERITY_NAMES = {
    DiagnosticSeverity.ERROR: "error",
    DiagnosticSeverity.WARNING: "warning",
    DiagnosticSeverity.NOTE: "note",
    DiagnosticSeverity.REMARK: "remark",
}


@dataclass
class Diagnostic:
    severity: str
    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    notes: list[Diagnostic] = field(default_factory=list)

    def render(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}: " if self.file else ""
        text = f"{where}{self.severity}: {self.message}"
        return "\n".join([text] + [note.render() for note in self.notes])


def from_mlir(info, source_name: str, line_offset: int = 0) -> Diagnostic:
    """Converts an MLIR Diagnostic/DiagnosticInfo. Locations of text parsed from
    a buffer read as "-" are mapped to `source_name`, shifted by `line_offset`
    (the split-input-file chunk's first line)."""
    diagnostic = Diagnostic(SEVERITY_NAMES.get(info.severity, "error"), str(info.message).strip())
    match = FILE_LOCATION.search(str(info.location))
    if match:
        file, line, column = match.group(1), int(match.group(2)), int(match.group(3))
        if file == "-":
            file, line = source_name, line + line_offset
        diagnostic.file, diagnostic.line, diagnostic.column = file, line, column
    diagnostic.notes = [from_mlir(note, source_name, line_offset) for note in info.notes]
    return diagnostic
