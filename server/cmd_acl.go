package server

import (
	"errors"
	"math"
	"os"
	"strings"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/acl"
	"github.com/cuckoohash/cuckoo/server/internal/command"
	"github.com/cuckoohash/cuckoo/server/internal/integer"
)

// Users and permissions: the ACL commands' handlers, AUTH and the check
// before each command. Package internal/acl owns the users, the rules, the
// checks, the log and the replies (its doc.go: the protocol).

// aclCommands binds this file's commands to their rows of Redis's table, by name.
func aclCommands() (b []binding) {
	b = append(b, binding{name: "acl|setuser", run: aclSetUser})
	b = append(b, binding{name: "acl|getuser", run: aclGetUser})
	b = append(b, binding{name: "acl|deluser", run: aclDelUser})
	b = append(b, binding{name: "acl|users", run: aclUsers})
	b = append(b, binding{name: "acl|list", run: aclList})
	b = append(b, binding{name: "acl|whoami", run: aclWhoami})
	b = append(b, binding{name: "acl|cat", run: aclCat})
	b = append(b, binding{name: "acl|log", run: aclLog})
	b = append(b, binding{name: "acl|save", run: aclSave})
	b = append(b, binding{name: "acl|load", run: aclLoad})
	b = append(b, binding{name: "acl|genpass", run: aclGenpass})
	b = append(b, binding{name: "acl|dryrun", run: aclDryrun})
	b = append(b, binding{name: "acl|help", run: func(s *Server, cl *client, a [][]byte) { acl.WriteHelp(cl.wr) }})
	return b
}

// aclLogMax is acllog-max-len's default.
const aclLogMax = 128

// loadUsers loads the ACL file at start, if there is one: its users replace
// the default ones (a default user it defines replaces requirepass's).
func (s *Server) loadUsers() error {
	if s.cfg.ACLFile == "" {
		return nil
	}
	err := s.loadACLFile()
	if errors.Is(err, os.ErrNotExist) {
		s.log.Info("ACL file not found: starting with the default user; ACL SAVE creates it", "file", s.cfg.ACLFile)
		return nil
	}
	return errors.Unwrap(err) // the cause, not ACL LOAD's reply
}

// setDefaultPassword is requirepass: the default user's password, or nopass
// when empty, as Redis's requirepass sets it.
func (s *Server) setDefaultPassword(pass string) {
	rules := []string{"nopass"}
	if pass != "" {
		rules = []string{"resetpass", ">" + pass}
	}
	if err := s.users.SetUser("default", rules...); err != nil {
		panic(err) // cannot happen: the rules are valid
	}
}

// loadACLFile replaces the users by the ACL file's (acl.Registry.Load), then
// closes the connections of users deleted and subscribers that lost a
// channel.
func (s *Server) loadACLFile() error {
	if err := s.users.Load(s.cfg.ACLFile); err != nil {
		return err
	}
	s.closeDeletedUsers()
	s.closeUnpermittedSubscribers(nil)
	return nil
}

// authDefault authenticates a new connection as the default user when that
// user needs no password, as Redis does.
func (s *Server) authDefault(cl *client) {
	ref := s.users.Get("default")
	if u := ref.Load(); u.Enabled && u.NoPass {
		cl.user.Store(ref)
	}
}

// authenticate checks name and pass, and on success makes cl that user. A
// failure is recorded in ACL LOG and answered as Redis does.
func (s *Server) authenticate(cl *client, name, pass []byte) error {
	ref := s.users.Get(string(name))
	if ref == nil || !ref.Load().CheckPassword(string(pass)) {
		s.denied(cl, "auth", "AUTH", string(name))
		return acl.ErrWrongPass
	}
	cl.user.Store(ref)
	return nil
}

// userName is the name of cl's user, "" before authentication.
func (cl *client) userName() string {
	if ref := cl.user.Load(); ref != nil {
		return ref.Load().Name
	}
	return ""
}

// check is acl's check of cmd for u (acl.User.Check): nil if u may run it.
// Commands that need no authentication are never denied.
func check(u *acl.User, cmd *bound, args [][]byte) *acl.Denied {
	if cmd.noAuth {
		return nil
	}
	return u.Check(int(cmd.id), cmd.spec.Name, cmd.spec, cmd.spec.Flags&command.PubSub != 0, args)
}

// permitted returns the error that refuses cmd for cl, or nil: NOAUTH
// before authentication, NOPERM (an *acl.Denied, recorded for ACL LOG) for
// a command, key or channel the user may not touch.
func (s *Server) permitted(cl *client, cmd *bound, args [][]byte) error {
	ref := cl.user.Load()
	if ref == nil {
		return acl.ErrNoAuth
	}
	u := ref.Load()
	if u.Unrestricted() {
		return nil
	}
	if d := check(u, cmd, args); d != nil {
		s.denied(cl, d.Reason, d.LogObject(), u.Name)
		return d
	}
	return nil
}

// denied records a denial for ACL LOG.
func (s *Server) denied(cl *client, reason, object, user string) {
	context := "toplevel"
	if cl.ks.InExec() {
		context = "multi"
	}
	info := ""
	if cl.nc != nil {
		info = s.clientLine(cl)
	}
	s.aclLog.Add(acl.LogEntry{Reason: reason, Context: context, Object: object, Username: user, ClientInfo: info}, time.Now())
}

// closeDeletedUsers closes the connections of users that no longer exist.
func (s *Server) closeDeletedUsers() {
	for _, c := range s.clientList() {
		if ref := c.user.Load(); ref != nil && ref.Deleted() {
			c.killed.Store(true)
			c.nc.Close()
		}
	}
}

func aclSetUser(s *Server, cl *client, a [][]byte) {
	rules := make([]string, len(a)-3)
	for i, r := range a[3:] {
		rules[i] = string(r)
	}
	if err := s.users.SetUser(string(a[2]), rules...); err != nil {
		s.writeErr(cl, replyErr("ERR "+err.Error()))
		return
	}
	s.closeUnpermittedSubscribers(cl)
	cl.wr.WriteString("OK")
}

func aclGetUser(s *Server, cl *client, a [][]byte) {
	var u *acl.User
	if ref := s.users.Get(string(a[2])); ref != nil {
		u = ref.Load()
	}
	acl.WriteUser(cl.wr, u)
}

func aclDelUser(s *Server, cl *client, a [][]byte) {
	names := make([]string, len(a)-2)
	for i, n := range a[2:] {
		names[i] = string(n)
	}
	n, err := s.users.DelUsers(names...)
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	s.closeDeletedUsers()
	cl.wr.WriteInt(n)
}

func aclUsers(s *Server, cl *client, a [][]byte) { acl.WriteUsers(cl.wr, s.users.Users()) }

func aclList(s *Server, cl *client, a [][]byte) { acl.WriteList(cl.wr, s.users.Users()) }

func aclWhoami(s *Server, cl *client, a [][]byte) { cl.wr.WriteBulkString(cl.userName()) }

// ACL CAT [category]
func aclCat(s *Server, cl *client, a [][]byte) {
	if len(a) > 3 {
		s.writeErr(cl, replyErr("ERR wrong number of arguments for 'acl|cat' command"))
		return
	}
	var category []byte
	if len(a) == 3 {
		category = a[2]
	}
	if err := acl.WriteCat(cl.wr, s.cmds.acl[moduleACL(s.filterDefaults().Compat)], category); err != nil {
		s.writeErr(cl, err)
	}
}

// ACL LOG [count | RESET]
func aclLog(s *Server, cl *client, a [][]byte) {
	n := 10
	switch {
	case len(a) > 3:
		s.writeErr(cl, replyErr("ERR wrong number of arguments for 'acl|log' command"))
		return
	case len(a) == 3 && strings.EqualFold(string(a[2]), "reset"):
		s.aclLog.Reset()
		cl.wr.WriteString("OK")
		return
	case len(a) == 3:
		v, ok := integer.Parse(a[2])
		if !ok {
			s.writeErr(cl, replyErr("ERR value is not an integer or out of range"))
			return
		}
		if v < 0 {
			s.writeErr(cl, replyErr("ERR value is out of range, must be positive"))
			return
		}
		n = int(min(v, math.MaxInt32))
	}
	acl.WriteLog(cl.wr, s.aclLog.Entries(n), time.Now())
}

// ACL SAVE writes the users to the ACL file, atomically
// (acl.Registry.Save).
func aclSave(s *Server, cl *client, a [][]byte) {
	if s.cfg.ACLFile == "" {
		s.writeErr(cl, acl.ErrNoFile)
		return
	}
	if err := s.users.Save(s.cfg.ACLFile); err != nil {
		s.log.Error("ACL SAVE", "file", s.cfg.ACLFile, "err", errors.Unwrap(err))
		s.writeErr(cl, err)
		return
	}
	cl.wr.WriteString("OK")
}

// ACL LOAD replaces the users by the file's, all or none.
func aclLoad(s *Server, cl *client, a [][]byte) {
	if s.cfg.ACLFile == "" {
		s.writeErr(cl, acl.ErrNoFile)
		return
	}
	if err := s.loadACLFile(); err != nil {
		s.writeErr(cl, err)
		return
	}
	cl.wr.WriteString("OK")
}

// ACL GENPASS [bits]: bits (default 256) of the system's secure random
// source, in hex.
func aclGenpass(s *Server, cl *client, a [][]byte) {
	bits := 256
	if len(a) == 3 {
		v, ok := integer.Parse(a[2])
		if !ok {
			s.writeErr(cl, replyErr("ERR value is not an integer or out of range"))
			return
		}
		bits = int(max(min(v, math.MaxInt32), -1)) // GenPass refuses what is out of its range
	} else if len(a) > 3 {
		s.writeErr(cl, replyErr("ERR wrong number of arguments for 'acl|genpass' command"))
		return
	}
	pass, err := acl.GenPass(bits)
	if err != nil {
		s.writeErr(cl, replyErr("ERR "+err.Error()))
		return
	}
	cl.wr.WriteBulkString(pass)
}

// ACL DRYRUN user command [arg...]
func aclDryrun(s *Server, cl *client, a [][]byte) {
	ref := s.users.Get(string(a[2]))
	if ref == nil {
		s.writeErr(cl, acl.UserNotFound(a[2]))
		return
	}
	req := a[3:]
	cmd, err := s.cmds.lookup(req)
	if cmd == nil {
		var arity *arityError
		if errors.As(err, &arity) {
			s.writeErr(cl, err)
		} else {
			s.writeErr(cl, acl.CommandNotFound(a[3]))
		}
		return
	}
	if d := check(ref.Load(), cmd, req); d != nil {
		cl.wr.WriteBulkString(d.DryRun())
		return
	}
	cl.wr.WriteString("OK")
}
