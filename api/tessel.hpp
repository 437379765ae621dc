// tessel/tessel.hpp — the public header: include this one.
#pragma once
#include "tessel/attention.hpp"
#include "tessel/backend.hpp"
#include "tessel/error.hpp"
#include "tessel/gemm.hpp"
#include "tessel/tensor.hpp"
