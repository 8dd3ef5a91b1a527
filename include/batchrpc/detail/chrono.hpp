// SPDX-License-Identifier: MIT
// Durations, time points and clocks: all of <chrono> that batchrpc names.
//
// Why not <chrono> itself: under C++20, libstdc++'s <chrono> adds calendars, time zones and
// their stream I/O, and with them <sstream>, which costs every file that includes batchrpc
// about a tenth of a second (bench/README.md, "What including batchrpc costs"). libstdc++
// (11 and later) keeps the part named here in <bits/chrono.h>, which its own <thread>,
// <mutex> and <condition_variable> include. Any other standard library gets <chrono>.
// User code that wants more of <chrono> includes it.
#pragma once

#include <version>  // defines __GLIBCXX__ under libstdc++

#if defined(__GLIBCXX__) && __has_include(<bits/chrono.h>)
#include <bits/chrono.h>
#else
#include <chrono>
#endif
