package nativeview

import (
	"slices"

	"k8s.io/apiserver/pkg/authentication/serviceaccount"
)

// Well-known identities of kube-apiserver (k8s.io/apiserver/pkg/authentication/user).
const (
	// AnonymousUser is the user of an unauthenticated request.
	AnonymousUser = "system:anonymous"
	// AuthenticatedGroup is the group of every authenticated user.
	AuthenticatedGroup = "system:authenticated"
	// UnauthenticatedGroup is the group of the anonymous user.
	UnauthenticatedGroup = "system:unauthenticated"
	// ServiceAccountsGroup is the group of every service account.
	ServiceAccountsGroup = "system:serviceaccounts"
)

// Groups returns the groups kube-apiserver gives a request made as user with the explicit
// groups (kubectl's --as and --as-group), as its impersonation filter does
// (k8s.io/apiserver/pkg/endpoints/filters/impersonation):
//   - a service account user (system:serviceaccount:<ns>:<name>) given no groups gets
//     system:serviceaccounts and system:serviceaccounts:<ns>, as its token would;
//   - every user but system:anonymous gets system:authenticated, unless the groups already
//     hold system:authenticated or system:unauthenticated;
//   - system:anonymous gets system:unauthenticated.
//
// The result is a new slice; groups is not modified.
func Groups(user string, groups []string) []string {
	out := slices.Clone(groups)
	if ns, ok := ServiceAccountNamespace(user); ok && len(groups) == 0 {
		out = append(out, ServiceAccountsGroup, ServiceAccountsGroup+":"+ns)
	}
	switch {
	case user == AnonymousUser:
		if !slices.Contains(out, UnauthenticatedGroup) {
			out = append(out, UnauthenticatedGroup)
		}
	case !slices.Contains(out, AuthenticatedGroup) && !slices.Contains(out, UnauthenticatedGroup):
		out = append(out, AuthenticatedGroup)
	}
	return out
}

// ServiceAccountNamespace returns the namespace of a service account's user name
// system:serviceaccount:<ns>:<name>, and whether user is one, by kube-apiserver's own
// serviceaccount.SplitUsername (valid namespace and name, no more colons).
func ServiceAccountNamespace(user string) (string, bool) {
	ns, _, err := serviceaccount.SplitUsername(user)
	return ns, err == nil
}
