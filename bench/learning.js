// SPDX-License-Identifier: Apache-2.0
// What a child asks the backend once a minute to learn a _find location's
// index, beside the page it serves: the design document CouchPageIndex
// names, or the location's _explain, and, the first time, one look at the
// index's view (limit=0, update=false). The bench's checks of one backend
// request a page leave these out.
'use strict';

function learningRead(r) {
  return (r.method === 'GET'
    && (/\/_design\/[^/?]+$/.test(r.url) || /\/_view\/[^/?]+\?limit=0&reduce=false(&update=false)?$/.test(r.url)))
    || (r.method === 'POST' && /\/_explain$/.test(r.url));
}

module.exports = { learningRead };
