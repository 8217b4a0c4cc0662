// All layers and losses: #include <burn/nn/nn.hpp>.
#pragma once

#include <burn/nn/activation.hpp>
#include <burn/nn/attention.hpp>
#include <burn/nn/batch_norm.hpp>
#include <burn/nn/conv1d.hpp>
#include <burn/nn/conv2d.hpp>
#include <burn/nn/conv_transpose2d.hpp>
#include <burn/nn/dropout.hpp>
#include <burn/nn/embedding.hpp>
#include <burn/nn/group_norm.hpp>
#include <burn/nn/gru.hpp>
#include <burn/nn/initializer.hpp>
#include <burn/nn/layer_norm.hpp>
#include <burn/nn/linear.hpp>
#include <burn/nn/loss/loss.hpp>
#include <burn/nn/lstm.hpp>
#include <burn/nn/padding.hpp>
#include <burn/nn/pool.hpp>
#include <burn/nn/rms_norm.hpp>
#include <burn/nn/sequential.hpp>
#include <burn/nn/transformer.hpp>
