// libring from its tarball through the C++ wrapper, found by pkg-config alone:
// prints "key owner" for each key argument on the ring of a JSON config.
#include <fstream>
#include <iostream>
#include <sstream>

#include <ring.hpp>

int main(int argc, char **argv) {
    if (argc < 2) {
        std::cerr << "usage: usage-cpp CONFIG.json KEY...\n";
        return 2;
    }
    std::ifstream file(argv[1]);
    std::stringstream config;
    config << file.rdbuf();
    try {
        shardring::Ring ring = shardring::Ring::from_json(config.str());
        std::cerr << "libring " << shardring::version() << " (C++)\n";
        for (int i = 2; i < argc; i++) std::cout << argv[i] << ' ' << ring.get(argv[i]) << '\n';
    } catch (const shardring::Error &error) {
        std::cerr << error.what() << '\n';
        return 1;
    }
    return 0;
}
