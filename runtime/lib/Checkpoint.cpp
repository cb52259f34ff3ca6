//===- Checkpoint.cpp - Single-file and sharded checkpoints ---------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"

#include "Json.h"

#include <string_view>
#include <sys/stat.h>
#include <unordered_map>

namespace seqc {

namespace {

/// Index files of real checkpoints are a few MB at most (one line per
/// tensor); a larger one is not an index.
constexpr size_t kMaxIndexBytes = 64u << 20;

bool endsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.substr(text.size() - suffix.size()) == suffix;
}

/// The directory part of `path` ("." for a bare file name), with no
/// trailing slash unless it is the root.
std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}

std::string joinPath(const std::string &dir, const std::string &name) {
  if (dir.empty() || dir.back() == '/')
    return dir + name;
  return dir + "/" + name;
}

/// A shard is named by a path relative to the index's directory that stays
/// inside it: not absolute, no ".." component.
bool isRelativeInside(const std::string &name) {
  if (name.empty() || name.front() == '/' ||
      name.find('\0') != std::string::npos)
    return false;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string::npos)
      end = name.size();
    if (name.compare(start, end - start, "..") == 0 && end - start == 2)
      return false;
    start = end + 1;
  }
  return true;
}

/// Where each tensor of an index lives, and whether a shard held it.
struct IndexEntry {
  size_t shard;
  bool found = false;
};

seqc_status *readIndex(const std::string &indexPath, Checkpoint *out) {
  const char *index = indexPath.c_str();
  std::shared_ptr<MappedFile> mapped;
  SEQC_RETURN_IF_ERROR(MappedFile::open(index, &mapped));
  if (mapped->size() > kMaxIndexBytes)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "'%s' is %zu bytes, more than an index of shards can be "
                      "(the limit is %zu)",
                      index, mapped->size(), kMaxIndexBytes);
  JsonValue json;
  std::string_view text(reinterpret_cast<const char *>(mapped->data()),
                        mapped->size());
  if (seqc_status *status = parseJson(text, &json, SEQC_STATUS_INVALID_FILE))
    return annotate(status, "'%s': the index is not valid JSON", index);
  if (!json.isObject())
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "'%s': the index is %s, not a JSON object", index,
                      json.kindName());
  if (const JsonValue *metadata = json.find("metadata");
      metadata && !metadata->isObject())
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "'%s': \"metadata\" is %s, not an object", index,
                      metadata->kindName());
  const JsonValue *map = json.find("weight_map");
  if (!map)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "'%s': the index has no \"weight_map\" (an object "
                      "naming the shard file of each tensor)",
                      index);
  if (!map->isObject())
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "'%s': \"weight_map\" is %s, not an object", index,
                      map->kindName());

  // The shards in the order the index first names them.
  std::vector<std::string> shards;
  std::unordered_map<std::string, size_t> shardIds;
  std::unordered_map<std::string, IndexEntry> entries;
  entries.reserve(map->keys.size());
  for (size_t i = 0; i < map->keys.size(); ++i) {
    const std::string &tensor = map->keys[i];
    const JsonValue &shard = map->items[i];
    if (!shard.isString())
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "'%s': the shard of tensor '%s' is %s, not a file "
                        "name",
                        index, printableText(tensor).c_str(), shard.kindName());
    if (!isRelativeInside(shard.string))
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "'%s': the shard of tensor '%s', '%s', is not a path "
                        "relative to the index's directory (absolute or "
                        "with '..')",
                        index, printableText(tensor).c_str(),
                        printableText(shard.string).c_str());
    auto [it, added] = shardIds.emplace(shard.string, shards.size());
    if (added)
      shards.push_back(shard.string);
    entries.emplace(tensor, IndexEntry{it->second});
  }

  std::string dir = directoryOf(indexPath);
  out->indexPath = indexPath;
  out->files.clear();
  out->files.reserve(shards.size());
  for (size_t s = 0; s < shards.size(); ++s) {
    CheckpointFile file;
    file.path = joinPath(dir, shards[s]);
    if (seqc_status *status = readSafetensors(file.path.c_str(), &file.file))
      return annotate(status, "'%s' names shard '%s'", index,
                      printableText(shards[s]).c_str());
    for (const SafetensorsTensor &tensor : file.file.tensors) {
      auto it = entries.find(tensor.name);
      if (it == entries.end())
        return makeStatus(SEQC_STATUS_INVALID_FILE,
                          "'%s': tensor '%s' is not in the index '%s'",
                          file.path.c_str(), printableText(tensor.name).c_str(),
                          index);
      if (it->second.shard != s)
        return makeStatus(SEQC_STATUS_INVALID_FILE,
                          "'%s': tensor '%s' is in shard '%s', but the "
                          "index '%s' places it in shard '%s'",
                          file.path.c_str(), printableText(tensor.name).c_str(),
                          printableText(shards[s]).c_str(), index,
                          printableText(shards[it->second.shard]).c_str());
      it->second.found = true;
    }
    out->files.push_back(std::move(file));
  }
  // In the index's order, so that the first one named is the first listed.
  for (const std::string &tensor : map->keys) {
    const IndexEntry &entry = entries.at(tensor);
    if (!entry.found)
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "'%s': tensor '%s' is listed in shard '%s', which "
                        "does not hold it",
                        index, printableText(tensor).c_str(),
                        printableText(shards[entry.shard]).c_str());
  }
  return nullptr;
}

bool isFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

} // namespace

seqc_status *readCheckpoint(const char *path, Checkpoint *out) {
  std::string target = path;
  struct stat st;
  if (::stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    std::string index = joinPath(target, kSafetensorsIndexName);
    std::string single = joinPath(target, kSafetensorsFileName);
    if (isFile(index))
      target = index;
    else if (isFile(single))
      target = single;
    else
      return makeStatus(SEQC_STATUS_IO_ERROR,
                        "'%s' is a directory without %s or %s", path,
                        kSafetensorsIndexName, kSafetensorsFileName);
  }
  if (endsWith(target, ".json"))
    return readIndex(target, out);
  out->indexPath.clear();
  out->files.clear();
  CheckpointFile file;
  file.path = target;
  SEQC_RETURN_IF_ERROR(readSafetensors(target.c_str(), &file.file));
  out->files.push_back(std::move(file));
  return nullptr;
}

} // namespace seqc
