// L2 weight decay folded into the gradient (grad + penalty * param), used by
// SGD, Adam and RMSProp. AdamW decays the weights directly instead.
#pragma once

namespace burn::optim {

struct WeightDecayConfig {
  double penalty = 0.0;
};

}  // namespace burn::optim
