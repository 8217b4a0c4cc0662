// burn-train's checkpoint index: a round trip, and damaged or hostile
// checkpoint.json files, which must end in a clear burn::Error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <burn/error.hpp>

#include "../checkpoint.hpp"

namespace {

namespace fs = std::filesystem;
using burn_train::CheckpointInfo;
using testing::HasSubstr;

class CheckpointIndex : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("burn_train_checkpoint_test_" + std::to_string(::getpid()) + "_" +
                                        testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    for (const char* name : {"model-epoch-1.safetensors", "optimizer-epoch-1.safetensors"}) std::ofstream(dir_ / name);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write_index(const std::string& text) const { std::ofstream(dir_ / "checkpoint.json") << text; }
  // A valid index with the given version, epochs_done and history texts.
  static std::string index_with(const std::string& version, const std::string& epochs_done,
                                const std::string& history) {
    return R"({"format": "burn-train-checkpoint", "version": )" + version + R"(, "epochs_done": )" + epochs_done +
           R"(, "model": "model-epoch-1.safetensors", "optimizer": "optimizer-epoch-1.safetensors",)"
           R"( "model_config": {"conv1": "32"}, "settings": {"seed": "42"}, "history": )" +
           history + "}";
  }
  std::string error_of_read() const {
    try {
      (void)burn_train::read_checkpoint(dir_);
    } catch (const burn::Error& e) {
      return e.what();
    }
    return "(no error)";
  }

  fs::path dir_;
};

TEST_F(CheckpointIndex, ReadsWhatCommitWrote) {
  CheckpointInfo info;
  info.epochs_done = 1;
  info.model_file = burn_train::model_checkpoint_path(dir_, 1);
  info.optimizer_file = burn_train::optimizer_checkpoint_path(dir_, 1);
  info.model_config = {{"conv1", "32"}};
  info.settings = {{"seed", "42"}};
  info.history_json = R"([{"epoch":1,"test_accuracy":0.5}])";
  burn_train::commit_checkpoint(dir_, info);
  const CheckpointInfo read = burn_train::read_checkpoint(dir_);
  EXPECT_EQ(read.epochs_done, 1u);
  EXPECT_EQ(read.model_file, info.model_file);
  EXPECT_EQ(read.optimizer_file, info.optimizer_file);
  EXPECT_EQ(read.model_config, info.model_config);
  EXPECT_EQ(read.settings, info.settings);
  EXPECT_EQ(read.history_json, info.history_json);
}

TEST_F(CheckpointIndex, AHugeFloatVersionIsAnError) {
  // Converting 1e117 to int was undefined behaviour (found by the fuzzer).
  write_index(index_with("1e117", "1", "[]"));
  EXPECT_THAT(error_of_read(), HasSubstr("has version 1e+117, this burn-train reads version 1"));
  write_index(index_with("1.0", "1", "[]"));
  EXPECT_THAT(error_of_read(), HasSubstr("has version 1.0, this burn-train reads version 1"));
  write_index(index_with("\"1\"", "1", "[]"));
  EXPECT_THAT(error_of_read(), HasSubstr("has version \"1\""));
}

TEST_F(CheckpointIndex, EpochsDoneMustBeANonNegativeInteger) {
  for (const char* bad : {"-1", "1e30", "2.5", "\"1\""}) {
    write_index(index_with("1", bad, "[]"));
    EXPECT_THAT(error_of_read(), HasSubstr("\"epochs_done\" must be a non-negative integer")) << bad;
  }
  write_index(index_with("1", "1", "[]"));
  EXPECT_EQ(burn_train::read_checkpoint(dir_).epochs_done, 1u);
}

TEST_F(CheckpointIndex, DeeplyNestedHistoryIsAnError) {
  // 100,000 nested arrays overflowed the stack in nlohmann's recursive dump().
  const std::size_t depth = 100000;
  write_index(index_with("1", "1", std::string(depth, '[') + std::string(depth, ']')));
  EXPECT_THAT(error_of_read(), HasSubstr("nests JSON values more than 32 levels deep"));
  // Brackets inside strings do not count.
  write_index(index_with("1", "1", R"([{"note": ")" + std::string(1000, '[') + R"("}])"));
  EXPECT_EQ(burn_train::read_checkpoint(dir_).history_json, R"([{"note":")" + std::string(1000, '[') + R"("}])");
}

TEST_F(CheckpointIndex, AnEndlessFileIsAnError) {
  fs::create_symlink("/dev/zero", dir_ / "checkpoint.json");
  EXPECT_THAT(error_of_read(), HasSubstr("is larger than 67108864 bytes"));
}

TEST_F(CheckpointIndex, NotAnObjectIsAnError) {
  write_index("[1, 2, 3]");
  EXPECT_THAT(error_of_read(), HasSubstr("is not a burn-train checkpoint index"));
  write_index("{\"format\": ");
  EXPECT_THAT(error_of_read(), HasSubstr("is malformed"));
}

}  // namespace
