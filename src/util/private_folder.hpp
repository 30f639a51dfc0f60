// Folders kjudge keeps state in where another local user can reach (caches, build scratch and
// coverage files under the temporary folder): each is this user's alone, or kjudge does not use
// it. A folder someone else made first, or one others may write, could hold entries planted to
// run as the judge's user, or lead kjudge's writes through a link to a file of theirs.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace kj::util {

// Creates `dir` (missing parents too) with mode 0700 where it is missing, then checks the folder
// itself: a real folder, not a symbolic link, owned by this process's user, writable by no one
// else. "" when it is private, else why not ("is owned by uid 65534, not this user's (0)").
std::string make_private_folder(const std::filesystem::path& dir);

// make_private_folder, or SpecError naming `dir` (as `what`, "--cache") and why.
void require_private_folder(const std::filesystem::path& dir, std::string_view what);

// A new folder under the temporary folder, of a name no one else can pick first (mkdtemp:
// "PREFIX-XXXXXX"), mode 0700. Throws InternalError when none can be made.
std::filesystem::path new_private_temp_folder(std::string_view prefix);

// The temporary folder's `name-UID`: a per-user default for state kept under /tmp.
std::filesystem::path per_user_temp_path(std::string_view name);

} // namespace kj::util
