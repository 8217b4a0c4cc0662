// burn-cpp: the umbrella header.
#pragma once

// First: which backends this build has (BURN_HAS_*), before anything tests them.
#include <burn/config.hpp>

#include <burn/activation.hpp>
#include <burn/amp.hpp>
#include <burn/autodiff.hpp>
#include <burn/collective.hpp>
#include <burn/collective/gradient_sync.hpp>
#include <burn/data/dataloader.hpp>
#include <burn/data/dataset.hpp>
#include <burn/data/idx.hpp>
#include <burn/data/mnist.hpp>
#include <burn/data/transform.hpp>
#include <burn/device.hpp>
#include <burn/dtype.hpp>
#include <burn/error.hpp>
#include <burn/kind.hpp>
#include <burn/lr_scheduler/lr_schedulers.hpp>
#include <burn/module/module.hpp>
#include <burn/module/ops.hpp>
#include <burn/nn/nn.hpp>
#include <burn/optim/optim.hpp>
#include <burn/record/module_record.hpp>
#include <burn/record/safetensors.hpp>
#include <burn/remote.hpp>
#include <burn/shape.hpp>
#include <burn/tensor.hpp>
#include <burn/tensor_data.hpp>
