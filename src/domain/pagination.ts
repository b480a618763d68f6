/** The pagination object of a list answer (SPEC part 2): the page asked for, and the total. */
export function presentPagination(
  page: { limit: number; offset: number },
  returned: number,
  total: number,
) {
  return {
    limit: page.limit,
    offset: page.offset,
    total,
    has_more: page.offset + returned < total,
  };
}
