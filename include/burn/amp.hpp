// Mixed precision: autocast scopes and the gradient scaler (docs/precision.md).
#pragma once

#include <burn/amp/autocast.hpp>
#include <burn/amp/grad_scaler.hpp>
