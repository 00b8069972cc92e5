/* SPDX-License-Identifier: MIT */
// DQL parser: what parses into which canonical query, and what every mistake reports
// (column and expectation), including hostile input that must never crash.
#include <gtest/gtest.h>

#include <fstream>
#include <initializer_list>
#include <random>
#include <sstream>
#include <string>

extern "C" {
#include "cl/dql/dql.h"
}

namespace
{

// Parses and returns the canonical form, or "ERROR: <message>".
std::string canon(const std::string &text)
{
    sluice_dql_query *q = nullptr;
    char err[1024];
    if (sluice_dql_parse(text.c_str(), &q, err, sizeof err) != 0) {
        EXPECT_EQ(q, nullptr);
        return std::string("ERROR: ") + err;
    }
    size_t need = sluice_dql_format(q, nullptr, 0);
    std::string out(need + 1, '\0');
    EXPECT_EQ(sluice_dql_format(q, &out[0], out.size()), need);
    out.resize(need);
    sluice_dql_free(q);
    return out;
}

std::string error_of(const std::string &text)
{
    std::string c = canon(text);
    EXPECT_EQ(c.rfind("ERROR: ", 0), 0u) << "query unexpectedly parsed: " << text << " -> " << c;
    return c.size() > 7 ? c.substr(7) : c;
}

// One query and what it gives: its canonical form, or its error message.
struct Case {
    std::string query;
    const char *expected;
};

void expect_canon(std::initializer_list<Case> cases)
{
    for (const Case &c : cases)
        EXPECT_EQ(canon(c.query), c.expected) << c.query;
}

void expect_errors(std::initializer_list<Case> cases)
{
    for (const Case &c : cases)
        EXPECT_EQ(error_of(c.query), c.expected) << c.query;
}

} // namespace

TEST(DqlParse, SelectorsAndClauses)
{
    expect_canon({
        {"SELECT ALL", "SELECT ALL"},
        {"select top 3", "SELECT TOP 3"},
        {"Select Pos 0", "SELECT POS 0"},
        {"SELECT ALL FROM NODE 1, 2,3", "SELECT ALL FROM NODE 1, 2, 3"},
        {"SELECT ALL FROM NODES 0", "SELECT ALL FROM NODE 0"},
        {"SELECT ALL ORDER BY clock DESC, name", "SELECT ALL ORDER BY clock DESC, name ASC"},
        {"SELECT TOP 2 FROM NODE 1 WHERE type = gpu ORDER BY global_mem DESC",
         "SELECT TOP 2 FROM NODE 1 WHERE type = gpu ORDER BY global_mem DESC"},
        {"  SELECT\tALL\n", "SELECT ALL"},
    });
}

TEST(DqlParse, PrecedenceNotOverAndOverOr)
{
    expect_canon({
        {"SELECT ALL WHERE type = gpu OR type = cpu AND clock > 1000",
         "SELECT ALL WHERE (type = gpu OR (type = cpu AND clock > 1000))"},
        {"SELECT ALL WHERE (type = gpu OR type = cpu) AND clock > 1000",
         "SELECT ALL WHERE ((type = gpu OR type = cpu) AND clock > 1000)"},
        {"SELECT ALL WHERE NOT type = gpu AND NOT NOT available",
         "SELECT ALL WHERE (NOT type = gpu AND NOT NOT available)"},
        // A chain of ORs is one n-ary node, not a deep tree.
        {"SELECT ALL WHERE node = 1 OR node = 2 OR node = 3",
         "SELECT ALL WHERE (node = 1 OR node = 2 OR node = 3)"},
    });
}

TEST(DqlParse, ValuesSizesStringsAndAliases)
{
    expect_canon({
        {"SELECT ALL WHERE global_mem >= 4G", "SELECT ALL WHERE global_mem >= 4294967296"},
        {"SELECT ALL WHERE local_mem >= 512MiB", "SELECT ALL WHERE local_mem >= 536870912"},
        {"SELECT ALL WHERE max_alloc > 64kb", "SELECT ALL WHERE max_alloc > 65536"},
        {"SELECT ALL WHERE max_compute_units <> 4", "SELECT ALL WHERE compute_units != 4"},
        {"SELECT ALL WHERE clock == 1000", "SELECT ALL WHERE clock = 1000"},
        {"SELECT ALL WHERE vendor = nvidia", "SELECT ALL WHERE vendor = 'nvidia'"},
        {"SELECT ALL WHERE name = \"Tesla V100\"", "SELECT ALL WHERE name = 'Tesla V100'"},
        {"SELECT ALL WHERE name = 'it''s'", "SELECT ALL WHERE name = 'it''s'"},
        {"SELECT ALL WHERE name LIKE 'basic*'", "SELECT ALL WHERE name LIKE 'basic*'"},
        {"SELECT ALL WHERE name = cpu-haswell", "SELECT ALL WHERE name = 'cpu-haswell'"},
        {"SELECT ALL WHERE driver_version = 3.1", "SELECT ALL WHERE driver_version = '3.1'"},
        {"SELECT ALL WHERE name = 'ORDER'", "SELECT ALL WHERE name = 'ORDER'"},
        {"SELECT ALL WHERE available = yes AND fp64 != false",
         "SELECT ALL WHERE (available = true AND fp64 != false)"},
        {"SELECT ALL WHERE type=ACCELERATOR", "SELECT ALL WHERE type = accelerator"},
        {"SELECT ALL WHERE rank = 2 AND local_index = 0 AND global_index < 4",
         "SELECT ALL WHERE (node = 2 AND index = 0 AND pos < 4)"},
        {"SELECT ALL WHERE name = 'Ünïcode ok inside quotes'",
         "SELECT ALL WHERE name = 'Ünïcode ok inside quotes'"},
        {"SELECT ALL WHERE clock > 18446744073709551615", "SELECT ALL WHERE clock > 18446744073709551615"},
    });
}

TEST(DqlParse, ErrorsNameTheColumnAndTheExpectation)
{
    expect_errors({
        {"SELECT TOP x", "column 12: expected a number after TOP, found 'x'"},
        {"SELECT ALL WHERE type gpu",
         "column 23: expected a comparison operator (= != < <= > >= LIKE) after 'type', found 'gpu'"},
        {"", "column 1: the query is empty; it starts with SELECT (for example SELECT ALL WHERE type = gpu)"},
        {"   ",
         "column 1: the query is empty; it starts with SELECT (for example SELECT ALL WHERE type = gpu)"},
        {"ALL", "column 1: expected SELECT at the start of the query, found 'ALL'"},
        {"SELECT", "column 7: expected ALL, TOP k or POS i after SELECT, found the end of the query"},
        {"SELECT TOP 0", "column 12: TOP needs a count of at least 1, found 0"},
        {"SELECT POS", "column 11: expected a number after POS, found the end of the query"},
        {"SELECT ALL FROM 1", "column 17: expected NODE after FROM, found '1'"},
        {"SELECT ALL FROM NODE 1,",
         "column 24: expected a node number after ',', found the end of the query"},
        {"SELECT ALL WHERE",
         "column 17: expected a condition (an attribute name, NOT or '('), found the end of the query"},
        {"SELECT ALL WHERE (type = gpu",
         "column 29: expected AND, OR or ')' to close the '(' of column 18, found the end of the query"},
        {"SELECT ALL WHERE type = gpu)",
         "column 28: expected AND, OR, ORDER BY or the end of the query, found ')'"},
        {"SELECT ALL ORDER clock", "column 18: expected BY after ORDER, found 'clock'"},
        {"SELECT ALL ORDER BY clock DESC name",
         "column 32: expected ',' or the end of the query after the ORDER BY list, found 'name'"},
        {"SELECT ALL LIMIT 3",
         "column 12: expected FROM NODE, WHERE, ORDER BY or the end of the query, found 'LIMIT'"},
        {"SELECT ALL WHERE name = ORDER",
         "column 25: expected a value after '=' (quote a value that is also a keyword), found 'ORDER'"},
        {"SELECT ALL WHERE clock ! 3",
         "column 24: '!' must be followed by '=' (use NOT to negate a condition)"},
        {"SELECT ALL WHERE clock > 3;", "column 27: unexpected character ';'"},
    });
}

TEST(DqlParse, UnknownAttributesListTheKnownOnes)
{
    std::string e = error_of("SELECT ALL WHERE colour = red");
    EXPECT_EQ(e.rfind("column 18: unknown attribute 'colour' (did you mean 'clock'?); known attributes: "
                      "type, vendor, name,",
                      0),
              0u)
        << e;
    for (int i = 0; i < SLUICE_DQL_ATTR_COUNT; i++)
        EXPECT_NE(e.find(sluice_dql_attrs[i].name), std::string::npos) << sluice_dql_attrs[i].name;
    e = error_of("SELECT ALL ORDER BY computeunits");
    EXPECT_NE(e.find("unknown attribute 'computeunits' (did you mean 'compute_units'?)"), std::string::npos)
        << e;
    e = error_of("SELECT ALL WHERE zzzzzzzz = 1");
    EXPECT_EQ(e.find("did you mean"), std::string::npos) << e;
}

TEST(DqlParse, TypeMismatchesAreErrors)
{
    expect_errors({
        {"SELECT ALL WHERE name < 3",
         "column 23: type mismatch: 'name' is text; compare it with =, != or LIKE, not '<'"},
        {"SELECT ALL WHERE clock > fast",
         "column 26: type mismatch: 'clock' is a number; expected a number after '>', found 'fast'"},
        {"SELECT ALL WHERE global_mem > 1.5G",
         "column 31: type mismatch: 'global_mem' is a number; expected a number or a size such as 4G or "
         "512MiB after '>', found '1.5G'"},
        {"SELECT ALL WHERE clock LIKE '1*'",
         "column 24: type mismatch: LIKE compares text, and 'clock' is a number"},
        {"SELECT ALL WHERE type > gpu",
         "column 23: type mismatch: 'type' is a device type; compare it with = or !=, not '>'"},
        {"SELECT ALL WHERE type = fpga", "column 25: expected a device type (cpu, gpu, accelerator, custom "
                                         "or default) after '=', found 'fpga'"},
        {"SELECT ALL WHERE available = maybe", "column 30: type mismatch: 'available' is true or false; "
                                               "expected true or false after '=', found 'maybe'"},
        {"SELECT ALL WHERE available >= 1",
         "column 28: type mismatch: 'available' is true or false; compare it with = or !=, not '>='"},
        {"SELECT ALL WHERE clock = 'x'",
         "column 26: type mismatch: 'clock' is a number; expected a number after '=', found 'x'"},
    });
}

TEST(DqlParse, HostileInputGetsAClearError)
{
    expect_errors({
        {"SELECT ALL WHERE name = 'abc",
         "column 25: unterminated string: the quote ' opened here is never closed"},
        {"SELECT ALL WHERE name = \"abc'",
         "column 25: unterminated string: the quote \" opened here is never closed"},
        {"SELECT ALL WHERE clock > 99999999999999999999",
         "column 26: the number '99999999999999999999' is too large (the largest is 18446744073709551615)"},
        {"SELECT ALL WHERE global_mem > 17179869184T",
         "column 31: the number '17179869184T' is too large (the largest is 18446744073709551615)"},
        {"SELECT ALL WHERE näme = x",
         "column 19: unexpected byte 0xc3: outside quotes a query is ASCII (quote non-ASCII text)"},
        {"SELECT ALL\x01", "column 11: unexpected control byte 0x01"},
        {"SELECT ALL WHERE name = 'a\x1b[31m'", "column 27: control byte 0x1b inside a string"},
        {std::string(5000, ' '), "column 4097: the query is longer than 4096 bytes"},
    });

    // Nesting: the limit is exact, and both parentheses and NOT count.
    auto nested = [](int depth, const char *open, const char *close) {
        std::string s = "SELECT ALL WHERE ";
        for (int i = 0; i < depth; i++)
            s += open;
        s += "clock > 1";
        for (int i = 0; i < depth; i++)
            s += close;
        return s;
    };
    EXPECT_EQ(canon(nested(SLUICE_DQL_MAX_DEPTH, "(", ")")).rfind("SELECT ALL WHERE clock > 1", 0), 0u);
    EXPECT_EQ(error_of(nested(SLUICE_DQL_MAX_DEPTH + 1, "(", ")")),
              "column 50: conditions are nested deeper than 32 levels of parentheses and NOT");
    EXPECT_NE(error_of(nested(SLUICE_DQL_MAX_DEPTH + 1, "NOT ", "")).find("nested deeper than 32"),
              std::string::npos);
    EXPECT_EQ(canon(nested(SLUICE_DQL_MAX_DEPTH, "NOT ", "")).rfind("SELECT ALL WHERE NOT NOT", 0), 0u);
    EXPECT_NE(error_of(nested(3000, "(", ")")).find("longer than 4096"), std::string::npos);

    // A long flat chain is fine (n-ary node, no recursion per term).
    std::string chain = "SELECT ALL WHERE node = 1";
    while (chain.size() < 4000)
        chain += " OR node = 1";
    EXPECT_EQ(canon(chain).rfind("SELECT ALL WHERE (node = 1 OR node = 1", 0), 0u);

    // Every prefix of a valid query either parses or reports an error with a column; no crash.
    const std::string full = "SELECT TOP 2 FROM NODE 1, 2 WHERE (type = gpu OR name LIKE 'basic*') AND NOT "
                             "global_mem < 4G ORDER BY clock DESC, node";
    for (size_t i = 0; i <= full.size(); i++) {
        std::string c = canon(full.substr(0, i));
        EXPECT_TRUE(c.rfind("SELECT", 0) == 0 || c.rfind("ERROR: column ", 0) == 0) << c;
    }
    // Every single byte value in the middle of a query: never a crash, always a clean result.
    for (int b = 1; b < 256; b++) {
        std::string q = "SELECT ALL WHERE name = x";
        q[17] = (char)b;
        std::string c = canon(q);
        EXPECT_TRUE(c.rfind("SELECT", 0) == 0 || c.rfind("ERROR: column ", 0) == 0) << b << ": " << c;
    }
}

// Random queries (fixed seed): generated from the grammar, then half of them damaged by
// splicing a random token in at a random byte. Every one either parses, and then its canonical
// form parses back to itself, or fails with a column inside the query.
namespace
{
std::string random_condition(std::mt19937 &rng, int depth)
{
    static const char *const leaves[] = {
        "type = gpu",      "type != cpu",      "name = 'a b'",        "vendor LIKE 'nv*'",
        "clock > 1000",    "global_mem >= 4G", "available",           "NOT fp64",
        "node = 1",        "pos < 3",          "compute_units <= 80", "driver_version = 3.0",
        "name = \"it''s\""};
    switch (depth > 4 ? 0 : rng() % 4) {
    case 0:
        return leaves[rng() % (sizeof leaves / sizeof leaves[0])];
    case 1:
        return "NOT " + random_condition(rng, depth + 1);
    case 2:
        return "(" + random_condition(rng, depth + 1) + " AND " + random_condition(rng, depth + 1) + ")";
    default:
        return random_condition(rng, depth + 1) + " OR " + random_condition(rng, depth + 1);
    }
}
} // namespace

TEST(DqlParse, RandomQueriesParseOrFailCleanly)
{
    static const char *const vocab[] = {"SELECT",
                                        "ALL",
                                        "TOP",
                                        "POS",
                                        "FROM",
                                        "NODE",
                                        "WHERE",
                                        "ORDER",
                                        "BY",
                                        "DESC",
                                        "AND",
                                        "OR",
                                        "NOT",
                                        "LIKE",
                                        "(",
                                        ")",
                                        ",",
                                        "=",
                                        "!=",
                                        "<",
                                        ">=",
                                        "type",
                                        "gpu",
                                        "'a b'",
                                        "clock",
                                        "4G",
                                        "0",
                                        "18446744073709551616",
                                        "'unterminated",
                                        "\xff",
                                        "!",
                                        "colour",
                                        ";",
                                        "\x01",
                                        " "};
    static const char *const selectors[] = {"SELECT ALL", "SELECT TOP 2", "SELECT POS 0",
                                            "SELECT ALL FROM NODE 1, 2"};
    std::mt19937 rng(7);
    size_t parsed = 0, failed = 0;
    for (int i = 0; i < 5000; i++) {
        std::string q = selectors[rng() % 4];
        if (rng() % 4)
            q += " WHERE " + random_condition(rng, 0);
        if (rng() % 3 == 0)
            q += " ORDER BY clock DESC, name";
        if (rng() % 2)
            q.insert(rng() % (q.size() + 1), vocab[rng() % (sizeof vocab / sizeof vocab[0])]);
        std::string c = canon(q);
        if (c.rfind("ERROR: column ", 0) == 0) {
            size_t col = std::stoul(c.substr(14));
            ASSERT_GE(col, 1u) << q;
            ASSERT_LE(col, q.size() + 1) << q << " -> " << c;
            failed++;
        } else {
            ASSERT_EQ(c.rfind("SELECT ", 0), 0u) << q << " -> " << c;
            ASSERT_EQ(canon(c), c) << "canonical form does not parse back to itself: " << q;
            parsed++;
        }
    }
    EXPECT_GT(parsed, 2000u); // both outcomes are well exercised
    EXPECT_GT(failed, 500u);
}

TEST(DqlParse, BlankMeansTheDefault)
{
    EXPECT_TRUE(sluice_dql_blank(nullptr));
    EXPECT_TRUE(sluice_dql_blank(""));
    EXPECT_TRUE(sluice_dql_blank(" \t\n"));
    EXPECT_FALSE(sluice_dql_blank(" x"));
    EXPECT_FALSE(sluice_dql_blank("SELECT ALL"));
}

TEST(DqlParse, ErrorBufferMayBeSmallOrAbsent)
{
    sluice_dql_query *q = nullptr;
    char small[8];
    EXPECT_EQ(sluice_dql_parse("SELECT TOP x", &q, small, sizeof small), -1);
    EXPECT_STREQ(small, "column ");
    EXPECT_EQ(sluice_dql_parse("SELECT TOP x", &q, nullptr, 0), -1);
    EXPECT_EQ(sluice_dql_parse(nullptr, &q, nullptr, 0), -1);
}

TEST(DqlParse, DocsDescribeEveryAttribute)
{
    std::ifstream f(SLUICE_SOURCE_DIR "/docs/DQL.md");
    ASSERT_TRUE(f.good()) << "docs/DQL.md is missing";
    std::stringstream ss;
    ss << f.rdbuf();
    std::string doc = ss.str();
    for (int i = 0; i < SLUICE_DQL_ATTR_COUNT; i++) {
        EXPECT_NE(doc.find("`" + std::string(sluice_dql_attrs[i].name) + "`"), std::string::npos)
            << "docs/DQL.md does not document " << sluice_dql_attrs[i].name;
    }
}
