// upstream/conninfo_redact: a libpq connection string with its password hidden (chapter 06;
// issue 38, after an operator found a --pg password on stderr, in /stats and as a /metrics
// label).
// Role: what a stage shows of --pg (HANDOFF_PG): its start-up line, /stats, /metrics,
// --print-config and any error text that might quote it. The password is replaced by `***`,
// as libpq's own displays of a connection's options do, in both of libpq's syntaxes: the
// keyword form (`host=db password=s3cret`, a value bare or single-quoted with \-escapes) and
// the URI form (`postgresql://user:s3cret@db/app?password=s3cret`). The way to give a password
// is a password file, which libpq reads itself (PGPASSFILE, default ~/.pgpass; PostgreSQL's
// manual, "The Password File"), so that it is in no setting at all. No libpq needed here.
#pragma once

#include <string>

namespace handoff::upstream {

/// `conninfo` with every password value replaced by `***`; the rest as given.
std::string redact_conninfo(const std::string& conninfo);

/// `text` (an error message, say) with every occurrence of `conninfo`'s password values
/// replaced by `***`; `text` itself when the conninfo has no password.
std::string scrub_password(const std::string& text, const std::string& conninfo);

}  // namespace handoff::upstream
