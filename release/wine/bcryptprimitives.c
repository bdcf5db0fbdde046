/* bcryptprimitives.dll for Wine 8 (Debian 12), which lacks it: Windows 8
 * and later ship it, and Rust's standard library (1.78+) imports its
 * ProcessPrng for random numbers (HashMap seeds), so no Rust DLL loads
 * under Wine 8 without it. Only `make test-platforms` builds this, to run
 * the Windows C tests under Wine; no artefact ships it.
 *
 * ProcessPrng(data, length) fills `length` bytes from the system's
 * generator (here RtlGenRandom, advapi32's SystemFunction036, which Wine
 * has) and, as on Windows, always returns TRUE. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
