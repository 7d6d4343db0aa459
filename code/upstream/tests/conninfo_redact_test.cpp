// upstream/tests/conninfo_redact_test: a --pg password is hidden in both of libpq's syntaxes
// (chapter 06; issue 38).
// Role: every form a password can take in a conninfo (bare, quoted with spaces and escapes,
// `password = x` with spaces around the '=', a URI's user info, a URI's query, percent-encoded)
// comes out as `***`, the rest as given; an error text quoting the password, as written or as
// libpq reads it, is scrubbed too.
#include "upstream/conninfo_redact.h"

#include <catch2/catch.hpp>
#include <string>

using handoff::upstream::redact_conninfo;
using handoff::upstream::scrub_password;

TEST_CASE("conninfo_redact: the keyword form's password is hidden, the rest kept", "[unit][ch06]") {
  CHECK(redact_conninfo("host=db port=5432 password=s3cret user=app") == "host=db port=5432 password=*** user=app");
  CHECK(redact_conninfo("password=s3cret") == "password=***");
  CHECK(redact_conninfo("host=db password = s3cret") == "host=db password = ***");
  CHECK(redact_conninfo("host=db password='two words \\' and more' user=app") == "host=db password=*** user=app");
  CHECK(redact_conninfo("host=db user=app") == "host=db user=app");
  CHECK(redact_conninfo("") == "");
}

TEST_CASE("conninfo_redact: the URI form's password is hidden, in the user info and the query", "[unit][ch06]") {
  CHECK(redact_conninfo("postgresql://app:s3cret@db:5432/app") == "postgresql://app:***@db:5432/app");
  CHECK(redact_conninfo("postgres://app:s3cret@db") == "postgres://app:***@db");
  CHECK(redact_conninfo("postgresql://app@db/app?password=s3cret&sslmode=disable") ==
        "postgresql://app@db/app?password=***&sslmode=disable");
  CHECK(redact_conninfo("postgresql://app:p%40ss@db/app") == "postgresql://app:***@db/app");
  CHECK(redact_conninfo("postgresql://db/app") == "postgresql://db/app");
}

TEST_CASE("conninfo_redact: an error text quoting the password loses it", "[unit][ch06]") {
  CHECK(scrub_password("bad value 's3cret' here", "host=db password=s3cret") == "bad value '***' here");
  CHECK(scrub_password("token \"p%40ss\" and p@ss", "postgresql://app:p%40ss@db/app") == "token \"***\" and ***");
  CHECK(scrub_password("nothing to hide", "host=db") == "nothing to hide");
}
