/* SPDX-License-Identifier: MIT */
// The MPI tag registry (runtime/mpi/tags.def): ranges are disjoint and fit the smallest
// MPI_TAG_UB the standard allows; a library with a smaller bound is refused with a line that
// names the range that does not fit.
#include <gtest/gtest.h>

#include <string>

extern "C" {
#include "cl/serve/remote_proto.h"
#include "mpi/tags.h"
}

TEST(MpiTags, RangesAreDisjointAndFitTheStandardMinimum)
{
    char err[160] = "";
    EXPECT_EQ(sluice_tags_check(32767, err, sizeof err), 0) << err;
}

TEST(MpiTags, ASmallerTagUpperBoundIsRefusedByName)
{
    char err[160] = "";
    ASSERT_EQ(sluice_tags_check(0x5000, err, sizeof err), -1);
    EXPECT_NE(std::string(err).find("COMMIT"), std::string::npos) << err;
    EXPECT_NE(std::string(err).find("MPI_TAG_UB 20480"), std::string::npos) << err;
}

TEST(MpiTags, ProtocolTagsStayInTheirRanges)
{
    EXPECT_GE(SLUICE_REMOTE_DATA_TAG(0), SLUICE_TAG_REMOTE_DATA);
    EXPECT_LT(SLUICE_REMOTE_DATA_TAG(0x7FFFFFFF), SLUICE_TAG_REMOTE_DATA + SLUICE_TAG_REMOTE_DATA_COUNT);
    EXPECT_LT(SLUICE_REMOTE_TAG_CLOCK, SLUICE_TAG_REMOTE_CTRL + SLUICE_TAG_REMOTE_CTRL_COUNT);
}
