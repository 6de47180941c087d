#pragma once
// What a report says about the build and the machine it ran on (docs/output.md, "Provenance";
// docs/report.schema.json).
#include <mpi.h>

#include <nlohmann/json_fwd.hpp>

namespace minisgd {

/// The version of the report's format (docs/report.schema.json). Raise it whenever a key of
/// the report is renamed or removed, changes type or meaning, or becomes required.
inline constexpr int kReportSchemaVersion = 1;

/// Build and machine provenance of a run on `world`: the report's first keys. Collective:
/// every rank's host name and thread count are gathered.
nlohmann::json provenance(MPI_Comm world);

}  // namespace minisgd
