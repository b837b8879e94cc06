// fmt's compiled part, once for the whole program. Every other file includes
// fmt's headers without FMT_HEADER_ONLY, which would compile this part into
// each of them (about 3.5 s of compiler time a file). Debian's libfmt-dev has
// no static library, and its shared one would be one more to bind at every
// start; these instantiations are what fmt's own library provides.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;

}  // namespace detail
FMT_END_NAMESPACE
