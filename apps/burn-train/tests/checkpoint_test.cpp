// burn-train's checkpoint index: a round trip, and damaged or hostile
// checkpoint.json files, which must end in a clear burn::Error; the removal
// of temporaries that a killed run left behind.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <burn/error.hpp>

#include "../checkpoint.hpp"
#include "../preflight.hpp"

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
  // A valid index with the given version, epochs_done and history texts
  // (the epoch files are empty: CRC-32 00000000).
  static std::string index_with(const std::string& version, const std::string& epochs_done, const std::string& history,
                                const std::string& model = "model-epoch-1.safetensors") {
    return R"({"format": "burn-train-checkpoint", "version": )" + version + R"(, "epochs_done": )" + epochs_done +
           R"(, "model": ")" + model +
           R"(", "optimizer": "optimizer-epoch-1.safetensors",)"
           R"( "model_crc32": "00000000", "optimizer_crc32": "00000000",)"
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
  EXPECT_THAT(error_of_read(), HasSubstr("has version 1e+117, this burn-train reads version 2"));
  write_index(index_with("2.0", "1", "[]"));
  EXPECT_THAT(error_of_read(), HasSubstr("has version 2.0, this burn-train reads version 2"));
  // An index without checksums (version 1) is not trusted either.
  write_index(index_with("1", "1", "[]"));
  EXPECT_THAT(error_of_read(), HasSubstr("has version 1, this burn-train reads version 2"));
  write_index(index_with("\"1\"", "1", "[]"));
  EXPECT_THAT(error_of_read(), HasSubstr("has version \"1\""));
}

TEST_F(CheckpointIndex, EpochsDoneMustBeAWholeNumberInRange) {
  for (const char* bad : {"-1", "1e30", "2.5", "\"1\"", "0", "1000001", "18446744073709551615"}) {
    write_index(index_with("2", bad, "[]"));
    EXPECT_THAT(error_of_read(), HasSubstr("\"epochs_done\" must be a whole number from 1 to 1000000")) << bad;
  }
  write_index(index_with("2", "1", "[]"));
  EXPECT_EQ(burn_train::read_checkpoint(dir_).epochs_done, 1u);
}

TEST_F(CheckpointIndex, DeeplyNestedHistoryIsAnError) {
  // 100,000 nested arrays overflowed the stack in nlohmann's recursive dump().
  const std::size_t depth = 100000;
  write_index(index_with("2", "1", std::string(depth, '[') + std::string(depth, ']')));
  EXPECT_THAT(error_of_read(), HasSubstr("nests JSON values more than 32 levels deep"));
  // Brackets inside strings do not count.
  write_index(index_with("2", "1", R"([{"note": ")" + std::string(1000, '[') + R"("}])"));
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

TEST_F(CheckpointIndex, FilesNamedForAnotherEpochOrPlaceAreAnError) {
  for (const char* elsewhere : {"model-epoch-2.safetensors", "../model-epoch-1.safetensors", "/etc/passwd"}) {
    write_index(index_with("2", "1", "[]", elsewhere));
    EXPECT_THAT(error_of_read(), HasSubstr("which burn-train calls 'model-epoch-1.safetensors'")) << elsewhere;
  }
}

TEST_F(CheckpointIndex, ADamagedEpochFileIsRefusedByItsChecksum) {
  CheckpointInfo info;
  info.epochs_done = 1;
  info.model_file = burn_train::model_checkpoint_path(dir_, 1);
  info.optimizer_file = burn_train::optimizer_checkpoint_path(dir_, 1);
  std::ofstream(info.model_file) << "the model's bytes";
  std::ofstream(info.optimizer_file) << "the optimizer's bytes";
  burn_train::commit_checkpoint(dir_, info);
  EXPECT_EQ(burn_train::read_checkpoint(dir_).epochs_done, 1u);
  {
    std::fstream f(info.model_file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4);
    f.put('M');  // one flipped letter
  }
  EXPECT_THAT(error_of_read(), HasSubstr("model-epoch-1.safetensors' is damaged: its CRC-32 is"));
}

TEST_F(CheckpointIndex, TemporariesOfKilledWritersAreRemoved) {
  // A process id that is not running: the largest the kernel hands out, plus one.
  const std::string gone = "4194305";
  const std::string mine = std::to_string(::getpid());
  const std::vector<std::string> stale{".model-epoch-3.safetensors.tmp-" + gone + "-0-ab12",
                                       ".optimizer-epoch-3.safetensors.tmp-" + gone + "-1-cd34",
                                       "checkpoint.json.tmp." + gone};
  const std::vector<std::string> kept{".model-epoch-4.safetensors.tmp-" + mine + "-0-ef56",  // a live writer's
                                      "notes.tmp." + gone, "model-epoch-1.safetensors"};
  for (const auto& name : stale) std::ofstream(dir_ / name) << "partial";
  for (const auto& name : kept) std::ofstream(dir_ / name) << "keep";
  EXPECT_EQ(burn_train::remove_stale_temporaries(dir_), stale.size());
  for (const auto& name : stale) EXPECT_FALSE(fs::exists(dir_ / name)) << name;
  for (const auto& name : kept) EXPECT_TRUE(fs::exists(dir_ / name)) << name;
}

}  // namespace
