// Every loss: cross-entropy, MSE, binary cross-entropy, Huber.
#pragma once

#include <burn/nn/loss/binary_cross_entropy.hpp>
#include <burn/nn/loss/cross_entropy.hpp>
#include <burn/nn/loss/huber.hpp>
#include <burn/nn/loss/mse.hpp>
#include <burn/nn/loss/reduction.hpp>
