// What the report says of the GPU that is read from the machine's files: runs on every build
// (test_gpu's own tests skip without a GPU, and ctest then lists all of test_gpu as skipped).
#include <gtest/gtest.h>

#include "minisgd/app/capabilities.hpp"

namespace minisgd {
namespace {

// Both formats of /proc/driver/nvidia/version seen: the proprietary module's and the open
// one's (an H200 with driver 580: "... Open Kernel Module for x86_64 ...", read as "for").
TEST(DeviceInfo, DriverVersionFromEitherKernelModule) {
  EXPECT_EQ(gpu::nvidia_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  "
                                       "535.104.05  Sat Aug 19 01:15:15 UTC 2023\nGCC version:  "
                                       "gcc version 12.2.0 (Debian 12.2.0-14)\n"),
            "535.104.05");
  EXPECT_EQ(gpu::nvidia_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                       "580.159.04  Release Build  (dvs-builder@U22-I3-AE18-23-3)"
                                       "\nGCC version:  gcc version 13.3.0\n"),
            "580.159.04");
  EXPECT_EQ(gpu::nvidia_driver_version(""), "");
  EXPECT_EQ(gpu::nvidia_driver_version("no module here 1.2"), "");
}

}  // namespace
}  // namespace minisgd
