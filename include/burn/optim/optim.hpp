// Every optimiser (SGD, Adam, AdamW, RMSProp), gradient clipping and GradientsParams.
#pragma once

#include <burn/optim/adam.hpp>
#include <burn/optim/adamw.hpp>
#include <burn/optim/grad_clipping.hpp>
#include <burn/optim/gradients_params.hpp>
#include <burn/optim/optimizer.hpp>
#include <burn/optim/rmsprop.hpp>
#include <burn/optim/sgd.hpp>
#include <burn/optim/weight_decay.hpp>
