// Every learning-rate scheduler: constant, step, exponential, cosine annealing, linear, Noam.
#pragma once

#include <burn/lr_scheduler/constant.hpp>
#include <burn/lr_scheduler/cosine.hpp>
#include <burn/lr_scheduler/exponential.hpp>
#include <burn/lr_scheduler/linear.hpp>
#include <burn/lr_scheduler/lr_scheduler.hpp>
#include <burn/lr_scheduler/noam.hpp>
#include <burn/lr_scheduler/step.hpp>
