#include "backends/vulkan/stream.hpp"

#include <cstring>

#include <fmt/format.h>

#include <burn/error.hpp>

#include "backends/vulkan/vk_check.hpp"

namespace burn::vulkan {
namespace {
constexpr VkDeviceSize kParamsChunk = 64 << 10;
constexpr std::uint32_t kSetsPerPool = 256;
}  // namespace

Stream::Stream(std::shared_ptr<Gpu> gpu, Pipelines& pipelines, DeviceBufferPtr error_word)
    : gpu_(std::move(gpu)),
      pipelines_(pipelines),
      upload_pool_(std::make_shared<MemoryPool>(gpu_, MemoryPool::Kind::Upload)),
      readback_pool_(std::make_shared<MemoryPool>(gpu_, MemoryPool::Kind::Readback)) {
  auto info = make<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  info.queueFamilyIndex = gpu_->adapter().queue_family;
  check(vkCreateCommandPool(gpu_->device(), &info, nullptr, &command_pool_), gpu_->label(), "vkCreateCommandPool");
  if (Timestamps::available(gpu_->adapter())) clock_ = std::make_unique<Timestamps>(gpu_);
  error_word_ = std::move(error_word);
  Batch& b = open();
  vkCmdFillBuffer(b.cb, error_word_->block().buffer, error_word_->block().offset, 4, 0);
}

Stream::~Stream() {
  VkDevice dev = gpu_->device();
  vkDeviceWaitIdle(dev);
  // Every submitted batch has run: its stamps hold real times; the open one's never run.
  for (auto& b : in_flight_) settle_stamps(*b, true);
  if (open_) settle_stamps(*open_, false);
  auto destroy = [&](std::unique_ptr<Batch>& b) {
    if (!b) return;
    for (VkDescriptorPool p : b->pools) vkDestroyDescriptorPool(dev, p, nullptr);
    vkDestroyFence(dev, b->fence, nullptr);
    b.reset();  // returns its host blocks before the pools go
  };
  destroy(open_);
  for (auto& b : in_flight_) destroy(b);
  for (auto& b : free_) destroy(b);
  vkDestroyCommandPool(dev, command_pool_, nullptr);
  upload_pool_->cleanup();
  readback_pool_->cleanup();
}

Stream::Batch& Stream::open() {
  if (open_) return *open_;
  reclaim(false);
  if (!free_.empty()) {
    open_ = std::move(free_.back());
    free_.pop_back();
  } else {
    auto b = std::make_unique<Batch>();
    auto alloc = make<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
    alloc.commandPool = command_pool_;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    check(vkAllocateCommandBuffers(gpu_->device(), &alloc, &b->cb), gpu_->label(), "vkAllocateCommandBuffers");
    auto fence = make<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
    if (VkResult r = vkCreateFence(gpu_->device(), &fence, nullptr, &b->fence); r != VK_SUCCESS) {
      vkFreeCommandBuffers(gpu_->device(), command_pool_, 1, &b->cb);
      check(r, gpu_->label(), "vkCreateFence");
    }
    open_ = std::move(b);
  }
  auto begin = make<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vkBeginCommandBuffer(open_->cb, &begin), gpu_->label(), "vkBeginCommandBuffer");
  open_->serial = ++serial_;
  open_->start = write_stamp(*open_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT);
  return *open_;
}

void Stream::barrier(VkCommandBuffer cb) {
  // Everything recorded or submitted before is finished and visible before
  // the next command starts (the first scope covers earlier submissions too).
  auto mb = make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                     VK_ACCESS_TRANSFER_WRITE_BIT;
  const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  vkCmdPipelineBarrier(cb, stages, stages, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

VkDescriptorSet Stream::descriptor_set(Batch& b) {
  for (;; ++b.pool) {
    if (b.pool == b.pools.size()) {
      VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerPool * kMaxBindings};
      auto info = make<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
      info.maxSets = kSetsPerPool;
      info.poolSizeCount = 1;
      info.pPoolSizes = &size;
      VkDescriptorPool pool = VK_NULL_HANDLE;
      check(vkCreateDescriptorPool(gpu_->device(), &info, nullptr, &pool), gpu_->label(), "vkCreateDescriptorPool");
      b.pools.push_back(pool);
    }
    VkDescriptorSetLayout layout = pipelines_.set_layout();
    auto alloc = make<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
    alloc.descriptorPool = b.pools[b.pool];
    alloc.descriptorSetCount = 1;
    alloc.pSetLayouts = &layout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    const VkResult r = vkAllocateDescriptorSets(gpu_->device(), &alloc, &set);
    if (r == VK_SUCCESS) return set;
    if (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL)
      check(r, gpu_->label(), "vkAllocateDescriptorSets");
  }
}

Binding Stream::push_params(Batch& b, std::span<const std::byte> params) {
  const VkDeviceSize align = std::max<VkDeviceSize>(gpu_->adapter().limits.minStorageBufferOffsetAlignment, 16);
  const VkDeviceSize size = std::max<VkDeviceSize>(params.size(), 16);
  VkDeviceSize at = (b.params_used + align - 1) / align * align;
  if (!b.params || at + size > b.params->block().capacity) {
    const Block block = upload_pool_->allocate(std::max(kParamsChunk, size));
    b.params = std::make_shared<DeviceBuffer>(upload_pool_, block);
    b.host_blocks.push_back(b.params);
    at = 0;
  }
  std::memcpy(b.params->block().mapped + at, params.data(), params.size());
  b.params_used = at + size;
  return Binding{b.params->block().buffer, b.params->block().offset + at, size};
}

void Stream::dispatch(VkPipeline pipeline, std::span<const Binding> tensors, std::span<const std::byte> params,
                      std::uint32_t gx, std::uint32_t gy, std::uint32_t gz, bool raises) {
  if (gx == 0 || gy == 0 || gz == 0) return;
  if (tensors.size() + 1 > kErrorBinding)
    throw Error("vulkan", fmt::format("a dispatch binds at most {} tensors", kErrorBinding - 1));
  Batch& b = open();
  if (raises && !b.error_copy)
    b.error_copy = std::make_shared<DeviceBuffer>(readback_pool_, readback_pool_->allocate(4));
  const Binding p = push_params(b, params);
  const VkDescriptorSet set = descriptor_set(b);
  VkDescriptorBufferInfo infos[kMaxBindings];
  VkWriteDescriptorSet writes[kMaxBindings];
  const std::size_t n = 2 + tensors.size();
  const Binding errors = binding_of(error_word_->block());
  for (std::size_t i = 0; i < n; ++i) {
    const Binding& src = i == 0 ? p : i == n - 1 ? errors : tensors[i - 1];
    infos[i] = VkDescriptorBufferInfo{src.buffer, src.offset, src.range};
    writes[i] = make<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
    writes[i].dstSet = set;
    writes[i].dstBinding = i == n - 1 ? kErrorBinding : static_cast<std::uint32_t>(i);
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  vkUpdateDescriptorSets(gpu_->device(), static_cast<std::uint32_t>(n), writes, 0, nullptr);
  barrier(b.cb);
  vkCmdBindPipeline(b.cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  vkCmdBindDescriptorSets(b.cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines_.layout(), 0, 1, &set, 0, nullptr);
  vkCmdDispatch(b.cb, gx, gy, gz);
  after_command(b);
}

void Stream::copy(const Binding& src, const Binding& dst, VkDeviceSize bytes) {
  if (bytes == 0) return;
  Batch& b = open();
  barrier(b.cb);
  const VkBufferCopy region{src.offset, dst.offset, bytes};
  vkCmdCopyBuffer(b.cb, src.buffer, dst.buffer, 1, &region);
  after_command(b);
}

void Stream::upload(std::span<const std::byte> data, const Binding& dst) {
  if (data.empty()) return;
  Batch& b = open();
  auto staging = std::make_shared<DeviceBuffer>(upload_pool_, upload_pool_->allocate(data.size()));
  std::memcpy(staging->block().mapped, data.data(), data.size());
  b.host_blocks.push_back(staging);
  b.staged += data.size();
  copy(binding_of(staging->block()), dst, data.size());
}

void Stream::download(const Binding& src, std::span<std::byte> out) {
  if (out.empty()) return sync();
  auto staging = std::make_shared<DeviceBuffer>(readback_pool_, readback_pool_->allocate(out.size()));
  copy(src, binding_of(staging->block()), out.size());
  sync();
  std::memcpy(out.data(), staging->block().mapped, out.size());
}

void Stream::retain(std::shared_ptr<const void> object) { open().retained.push_back(std::move(object)); }

void Stream::after_command(Batch& b) {
  ++b.commands;
  if (b.commands >= kMaxCommandsPerBatch || b.staged >= kMaxStagedBytesPerBatch) flush();
}

void Stream::flush() {
  if (!open_) return;
  std::unique_ptr<Batch> b = std::move(open_);
  if (b->error_copy) {
    // Hand the error word to the host and clear it for the next batch.
    const Block& word = error_word_->block();
    barrier(b->cb);
    const VkBufferCopy region{word.offset, b->error_copy->block().offset, 4};
    vkCmdCopyBuffer(b->cb, word.buffer, b->error_copy->block().buffer, 1, &region);
    barrier(b->cb);
    vkCmdFillBuffer(b->cb, word.buffer, word.offset, 4, 0);
  }
  // Results copied out become visible to the host once the fence signals.
  auto mb = make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(b->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
  VkResult r = vkEndCommandBuffer(b->cb);
  if (r == VK_SUCCESS) {
    auto submit = make<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &b->cb;
    if (fail_next_submit_) {
      fail_next_submit_ = false;
      r = VK_ERROR_DEVICE_LOST;
    } else {
      r = vkQueueSubmit(gpu_->queue(), 1, &submit, b->fence);
    }
  }
  if (r != VK_SUCCESS) {
    // Nothing of this batch reached the queue: its results are lost, which
    // the next sync reports; its resources can be reused at once.
    fail(fmt::format("submitting {} queued command(s) failed: {}", b->commands, result_name(r)));
    recycle(std::move(b));
    return;
  }
  in_flight_.push_back(std::move(b));
}

void Stream::recycle(std::unique_ptr<Batch> b) {
  settle_stamps(*b, false);  // stamps not read by now never ran
  b->start.reset();
  vkResetCommandBuffer(b->cb, 0);
  vkResetFences(gpu_->device(), 1, &b->fence);
  for (VkDescriptorPool p : b->pools) vkResetDescriptorPool(gpu_->device(), p, 0);
  b->pool = 0;
  b->host_blocks.clear();
  b->retained.clear();
  b->params.reset();
  b->params_used = 0;
  b->staged = 0;
  b->commands = 0;
  b->error_copy.reset();
  free_.push_back(std::move(b));
}

void Stream::reclaim(bool wait) {
  while (!in_flight_.empty()) {
    Batch& b = *in_flight_.front();
    const VkResult r = wait ? vkWaitForFences(gpu_->device(), 1, &b.fence, VK_TRUE, UINT64_MAX)
                            : vkGetFenceStatus(gpu_->device(), b.fence);
    if (r == VK_NOT_READY || r == VK_TIMEOUT) return;
    std::unique_ptr<Batch> done = std::move(in_flight_.front());
    in_flight_.pop_front();
    if (r != VK_SUCCESS) {
      fail(fmt::format("the queue failed while running {} command(s): {}", done->commands, result_name(r)));
      // A lost device may never signal the fence: drop the batch's resources.
      vkDeviceWaitIdle(gpu_->device());
    } else {
      settle_stamps(*done, true);
      if (done->error_copy) {
        std::uint32_t bits = 0;
        std::memcpy(&bits, done->error_copy->block().mapped, 4);
        if (bits) fail_device(bits);
      }
    }
    recycle(std::move(done));
  }
}

StampPtr Stream::write_stamp(Batch& b, VkPipelineStageFlagBits stage) {
  if (!clock_) return nullptr;
  std::optional<std::uint32_t> slot = clock_->acquire();
  if (!slot) {
    // Every slot waits for a submitted batch: finishing them frees all but the
    // open batch's own (one start stamp at most, far below the pool's size).
    reclaim(true);
    slot = clock_->acquire();
    if (!slot)
      throw Error("profile", fmt::format("{}: more than {} profile windows are open in one batch of work; "
                                         "close some, or sync between them",
                                         gpu_->label(), Timestamps::kSlots));
  }
  auto stamp = std::make_shared<Stamp>();
  stamp->batch = b.serial;
  clock_->write(b.cb, *slot, stage);
  b.stamps.emplace_back(*slot, stamp);
  return stamp;
}

void Stream::settle_stamps(Batch& b, bool ran) {
  for (auto& [slot, stamp] : b.stamps) {
    if (ran) clock_->read(slot, *stamp);
    else if (stamp->state == Stamp::State::Pending) stamp->state = Stamp::State::Failed;
    clock_->release(slot);
  }
  b.stamps.clear();
}

StampPtr Stream::window_start() {
  if (!clock_) return nullptr;
  reclaim(false);
  if (!in_flight_.empty()) return in_flight_.front()->start;
  return open().start;
}

StampPtr Stream::stamp_now() {
  if (!clock_) return nullptr;
  // Bottom of pipe: written once every earlier command has completed.
  return write_stamp(open(), VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
}

void Stream::wait_for(const Stamp& s) {
  if (s.state != Stamp::State::Pending) return;
  if (open_ && open_->serial == s.batch) flush();
  reclaim(true);
}

void Stream::fail(std::string message) {
  if (error_.empty()) error_ = std::move(message);
}

void Stream::fail_device(std::uint32_t bits) {
  if (!error_.empty()) return;
  const auto raised = [&](std::uint32_t bit, const char* op, const char* what) {
    if (!(bits & bit) || !error_.empty()) return;
    error_op_ = op;
    error_ = what;
  };
  raised(kErrorDivByZero, "div", "integer division by zero");
  raised(kErrorRemByZero, "remainder", "integer remainder by zero");
  raised(kErrorPowNegative, "pow", "0 cannot be raised to a negative integer power (division by zero)");
  raised(kErrorShiftNegative, "shift", "a shift count is negative");
  if (error_.empty()) error_ = fmt::format("a shader reported error bits {:#x}", bits);
  error_ += " (found on the device while running queued work)";
}

void Stream::sync() {
  flush();
  reclaim(true);
  if (!error_.empty()) {
    const std::string message = std::move(error_);
    const std::string op = error_op_.empty() ? gpu_->label() : error_op_;
    error_.clear();
    error_op_.clear();
    throw ExecutionError(op, fmt::format("{}: {}; tensors computed since the previous sync hold undefined values",
                                         gpu_->label(), message));
  }
}

}  // namespace burn::vulkan
