/* bcryptprimitives.dll for wine 8.0, which lacks it: Rust's Windows std
 * imports ProcessPrng from it for its random hash-map keys. This forwards
 * to advapi32's RtlGenRandom (SystemFunction036), which wine has. Built by
 * scripts/cross-build.sh with mingw and put next to the Windows binary.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x7fffffff ? 0x7fffffff : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
